// A throwaway one-host Ceph 16 for the integration tier (root): one mon and one bluestore OSD whose
// block device is a sparse file outside the OSD data dir (docs: ../shared/design/environment.md),
// `auth … = none`, pool size 1, its own conf/fsid in a temp dir. It runs in a network namespace
// ("host", 10.254.0.1 — the sample config's storage network, node hv1 by-id) joined by a veth pair
// to a second namespace ("foreign", 10.254.0.2, as node hv2 would be): a client there reaches the
// mon and holds locks from another address.
//
// No mgr by default: the RBD work of these tests (pool create, rbd create, lock add/list/remove,
// librbd I/O with the exclusive lock) is served by the mon and the OSD; a mgr only aggregates
// statistics (`ceph df`, PG states) and costs ~300 MB and seconds. `withMgr` starts one for tests
// that need those figures.
//
// Daemons run in the foreground as children of the test process (`-f`); `destroy()` stops them
// (SIGTERM, SIGKILL after a bound), kills anything left in the namespaces, deletes them and the
// temp dir. Every wait is bounded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { realClock } from '@pvc/runtime';
import { waitUntil } from '../../support/wait.js';
import { cephConf } from './ceph-conf.js';
import { run, type RunResult } from './run.js';

/** Binaries the one-host Ceph needs, with their Debian package. */
const NEEDED: readonly [string, string][] = [
  ['ceph-mon', 'ceph-mon'], ['ceph-osd', 'ceph-osd'], ['ceph', 'ceph-common'], ['rbd', 'ceph-common'],
  ['monmaptool', 'ceph-common'], ['ip', 'iproute2'],
];

/** Throws naming every missing binary and its package (the tests never skip). */
export function requireCephBinaries(extra: readonly [string, string][] = []): void {
  const missing = [...NEEDED, ...extra].filter(([bin]) => spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0);
  if (missing.length > 0) {
    throw new Error(`one-host Ceph: missing ${missing.map(([b, p]) => `${b} (Debian package ${p})`).join(', ')}; run scripts/setup.sh`);
  }
  if (process.getuid?.() !== 0) throw new Error('one-host Ceph: must run as root (network namespaces, ceph daemons)');
}

/** Options of {@link CephHost.start}. */
export interface CephHostOptions {
  /** Pool created and initialised for RBD (default `vms`). */
  pool?: string;
  /** Start a mgr too (default false). */
  withMgr?: boolean;
  /** Bound of the whole bring-up (default 90 s). */
  timeoutMs?: number;
}

/** Where each namespace sits. */
export const HOST_IP = '10.254.0.1';
export const FOREIGN_IP = '10.254.0.2';

/** A running one-host Ceph; see the file comment. */
export class CephHost {
  /** Milliseconds from the first command to the pool being usable. */
  startMs = 0;
  private readonly children: { name: string; child: ChildProcess }[] = [];

  private constructor(
    readonly dir: string,
    readonly conf: string,
    readonly hostNs: string,
    readonly foreignNs: string,
    readonly pool: string,
  ) {}

  /** Brings the cluster up and waits (bounded) until the OSD is up and the pool takes an image. */
  static async start(opts: CephHostOptions = {}): Promise<CephHost> {
    requireCephBinaries();
    const t0 = realClock.now();
    const dir = mkdtempSync(join(tmpdir(), 'pvc-ceph-'));
    const tag = `${process.pid % 100_000}`;
    const host = new CephHost(dir, join(dir, 'ceph.conf'), `pvcceph${tag}h`, `pvcceph${tag}f`, opts.pool ?? 'vms');
    try {
      await host.bringUp(opts, t0 + (opts.timeoutMs ?? 90_000));
    } catch (err) {
      const logs = host.logTail();
      await host.destroy();
      throw new Error(`one-host Ceph did not come up: ${err instanceof Error ? err.message : String(err)}\n${logs}`);
    }
    host.startMs = realClock.now() - t0;
    return host;
  }

  /** `CEPH_CONF` for clients of this cluster. */
  get env(): Record<string, string> {
    return { CEPH_CONF: this.conf };
  }

  /** Runs a command in the host namespace with this cluster's conf. */
  inHost(cmd: string, args: readonly string[], timeoutMs = 30_000): Promise<RunResult> {
    return run('ip', ['netns', 'exec', this.hostNs, cmd, ...args], { env: this.env, timeoutMs });
  }

  /** Runs a command in the foreign namespace (another node's address) with this cluster's conf. */
  inForeign(cmd: string, args: readonly string[], timeoutMs = 30_000): Promise<RunResult> {
    return run('ip', ['netns', 'exec', this.foreignNs, cmd, ...args], { env: this.env, timeoutMs });
  }

  /** Like {@link inHost}, but a non-zero exit throws with its stderr. */
  async mustInHost(cmd: string, args: readonly string[], timeoutMs = 30_000): Promise<string> {
    const r = await this.inHost(cmd, args, timeoutMs);
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return r.stdout;
  }

  /** Resident memory (kB) of each daemon, from /proc. */
  memoryKb(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const { name, child } of this.children) {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        out[name] = Number(m?.[1] ?? 0);
      } catch {
        out[name] = 0;
      }
    }
    return out;
  }

  /** Stops every daemon and anything else in the namespaces, deletes the namespaces and the temp dir. */
  async destroy(): Promise<void> {
    for (const { child } of [...this.children].reverse()) child.kill('SIGTERM');
    for (const { name, child } of this.children) {
      const gone = await exited(child, 15_000);
      if (!gone) {
        child.kill('SIGKILL');
        if (!(await exited(child, 5_000))) throw new Error(`one-host Ceph: ${name} (pid ${child.pid}) did not exit after SIGKILL`);
      }
    }
    for (const ns of [this.hostNs, this.foreignNs]) await killNamespace(ns);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async bringUp(opts: CephHostOptions, deadline: number): Promise<void> {
    const left = (): number => Math.max(1_000, deadline - realClock.now());
    await this.makeNamespaces();
    const fsid = randomUUID();
    for (const d of ['run', 'log', 'mon/ceph-a', 'osd/ceph-0', 'mgr/ceph-x']) mkdirSync(join(this.dir, d), { recursive: true });
    writeFileSync(this.conf, cephConf({ dir: this.dir, fsid, monIp: HOST_IP }));
    const monAddr = `[v2:${HOST_IP}:3300,v1:${HOST_IP}:6789]`;
    await this.must('monmaptool', ['--create', '--addv', 'a', monAddr, '--fsid', fsid, join(this.dir, 'monmap')]);
    await this.mustInHost('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(this.dir, 'monmap')]);
    this.daemon('mon.a', 'ceph-mon', ['-f', '-i', 'a']);
    const osdUuid = randomUUID();
    await this.mustInHost('ceph', ['osd', 'new', osdUuid], left());
    await this.mustInHost('ceph-osd', ['-i', '0', '--mkfs', '--osd-uuid', osdUuid], left());
    this.daemon('osd.0', 'ceph-osd', ['-f', '-i', '0']);
    if (opts.withMgr) this.daemon('mgr.x', 'ceph-mgr', ['-f', '-i', 'x']);
    await waitUntil(async () => JSON.parse(await this.mustInHost('ceph', ['osd', 'stat', '--format', 'json'], 10_000)) as { num_up_osds?: number }, {
      what: 'osd.0 up (ceph osd stat)', timeoutMs: left(), intervalMs: 250, until: (s) => s.num_up_osds === 1,
    });
    await this.mustInHost('ceph', ['osd', 'pool', 'create', this.pool, '8', '8'], left());
    await this.mustInHost('rbd', ['pool', 'init', this.pool], left());
    if (opts.withMgr) {
      await waitUntil(async () => JSON.parse(await this.mustInHost('ceph', ['mgr', 'stat', '--format', 'json'], 10_000)) as { available?: boolean }, {
        what: 'an active mgr (ceph mgr stat)', timeoutMs: left(), intervalMs: 250, until: (s) => s.available === true,
      });
    }
  }

  private async makeNamespaces(): Promise<void> {
    const [h, f] = [this.hostNs, this.foreignNs];
    for (const ns of [h, f]) await killNamespace(ns); // a run killed before its teardown
    const steps: string[][] = [
      ['netns', 'add', h], ['netns', 'add', f],
      ['-n', h, 'link', 'set', 'lo', 'up'], ['-n', f, 'link', 'set', 'lo', 'up'],
      ['-n', h, 'link', 'add', 'stor0', 'type', 'veth', 'peer', 'name', 'stor0', 'netns', f],
      ['-n', h, 'address', 'add', `${HOST_IP}/24`, 'dev', 'stor0'], ['-n', f, 'address', 'add', `${FOREIGN_IP}/24`, 'dev', 'stor0'],
      ['-n', h, 'link', 'set', 'stor0', 'up'], ['-n', f, 'link', 'set', 'stor0', 'up'],
    ];
    for (const args of steps) await this.must('ip', args);
  }

  private async must(cmd: string, args: string[]): Promise<void> {
    const r = await run(cmd, args, { env: this.env, timeoutMs: 30_000 });
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  }

  private daemon(name: string, bin: string, args: string[]): void {
    const log = openSync(join(this.dir, 'log', `${name}.out`), 'a');
    const child = spawn('ip', ['netns', 'exec', this.hostNs, bin, ...args], { env: { ...process.env, ...this.env }, stdio: ['ignore', log, log] });
    this.children.push({ name, child });
  }

  private logTail(): string {
    const out: string[] = [];
    for (const { name } of this.children) {
      for (const file of [`${name}.out`, `ceph-${name}.log`]) {
        try {
          out.push(`--- ${file}\n${readFileSync(join(this.dir, 'log', file), 'utf8').split('\n').slice(-15).join('\n')}`);
        } catch {
          // not written
        }
      }
    }
    return out.join('\n');
  }
}

/** True once `child` has exited, false after `ms`. */
async function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const ac = new AbortController();
  const exit = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
  const timer = realClock.sleep(ms, ac.signal).then(() => false, () => false);
  const gone = await Promise.race([exit, timer]);
  ac.abort();
  return gone;
}

/** Kills every process in `ns` (if it exists) and deletes it. */
async function killNamespace(ns: string): Promise<void> {
  const list = await run('ip', ['netns', 'pids', ns], { timeoutMs: 5_000 });
  if (list.code !== 0) return;
  for (const pid of list.stdout.split(/\s+/).filter(Boolean)) spawnSync('kill', ['-9', pid]);
  await waitUntil(async () => (await run('ip', ['netns', 'pids', ns], { timeoutMs: 5_000 })).stdout.trim() === '', { what: `no process left in ${ns}`, timeoutMs: 10_000 });
  await run('ip', ['netns', 'del', ns], { timeoutMs: 5_000 });
}
