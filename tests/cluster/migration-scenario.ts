/**
 * Live migration on a real harness cluster, shared by `vmd-migration.test.ts` and
 * `bench/migration.ts`: the node services run on every host (startFailoverCluster); a guest is
 * defined and started with `pvc vm define/start`; a migration is asked for with `pvc vm migrate`
 * or `pvc vm unmigrate` and timed from its write (the `state` key's modification time on the ZK
 * server: the CLI's own start-up is not counted) until ZK says `start` on the target and virsh
 * shows the domain there only. The guest's console ticks once a second: a background sampler records
 * when each tick first appeared, so the largest gap between new ticks bounds the guest's downtime
 * (libvirt keeps no completed-job figures here: the transient source domain is gone and the target
 * reports none).
 */
import { readFileSync } from 'node:fs';
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { lastTick, waitFor } from './harness/index.js';
import type { ClusterHost } from './harness/index.js';
import type { FailoverCluster } from './failover-scenario.js';

/** The guest of the scenario. */
export interface MigGuest {
  name: string;
  uuid: string;
}

/** One migration's figures. */
export interface MigrationRun {
  from: string;
  to: string;
  /** ms from the CLI's ZK write to `state=start` on the target with virsh showing it only there. */
  totalMs: number;
  /** Epoch ms of the ZK write and of the check that found it done (for the double-run windows). */
  startedAt: number;
  doneAt: number;
  /** Largest gap between two new console ticks around the migration, ms (≥ 1000: one tick per second). */
  tickGapMs: number;
  ticksBefore: number;
  ticksAfter: number;
}

/** Running UUIDs of a host (state running only: a paused incoming migration is not "running"). */
export async function runningOn(h: ClusterHost): Promise<string[]> {
  const r = await h.virsh(['list', '--uuid', '--state-running'], { timeoutMs: 10_000 });
  if (r.exitCode !== 0) throw new Error(`virsh list on ${h.name}: ${r.stderr.trim()}`);
  return r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
}

/** An RBD disk for {@link placeGuest}'s guest: a new image `<pool>/<name>` (the cluster needs `ceph: true`). */
export interface MigRbdDisk {
  /** Written at offset 0 once booted (`pvc.marker=write:<marker>`). */
  marker: string;
  /** `pvc.diskwrite=<s>`: the guest writes a counter every s seconds and prints `disk write <n> ok|fail`. */
  diskWriteS?: number;
  /** Image size, MiB (default 64). */
  sizeMiB?: number;
}

async function guestXml(fc: FailoverCluster, host: ClusterHost, name: string, uuid: string, rbd: MigRbdDisk | undefined): Promise<string> {
  if (!rbd) return fc.cluster.guest.domainXml(name, { uuid, memoryMiB: 96 });
  const ceph = fc.cluster.ceph;
  if (!ceph) throw new Error(`guest ${name}: an RBD disk needs a cluster with ceph: true`);
  const made = await host.exec('rbd', ['create', '--size', String(rbd.sizeMiB ?? 64), `${ceph.pool}/${name}`]);
  if (made.exitCode !== 0) throw new Error(`rbd create ${ceph.pool}/${name} on ${host.name}: ${made.stderr.trim()}`);
  const write = rbd.diskWriteS === undefined ? '' : ` pvc.diskwrite=${rbd.diskWriteS}`;
  return fc.cluster.guest.domainXml(name, {
    uuid, memoryMiB: 96, disks: [{ pool: ceph.pool, image: name }], cmdline: `pvc.disk=/dev/vda pvc.marker=write:${rbd.marker}${write}`,
  });
}

/**
 * Defines the guest on `host` and starts it (`pvc vm define --target`, `pvc vm start --wait`); waits for it to run there and tick.
 * Diskless unless `opts.rbd` gives it a raw virtio disk on its own new RBD image.
 */
export async function placeGuest(
  fc: FailoverCluster, host: ClusterHost, name = 'mvm1', uuid = 'e0000000-0000-4000-8000-000000000001', opts: { rbd?: MigRbdDisk } = {},
): Promise<MigGuest> {
  await fc.cli.define(await guestXml(fc, host, name, uuid, opts.rbd), host.name);
  await fc.cli.ok('vm', 'start', name, '--wait', '--wait-timeout', '120');
  await waitFor(`${name} running on ${host.name}`, 120_000, async () => ((await runningOn(host)).includes(uuid) ? true : undefined), 250);
  const log = fc.cluster.guest.consoleLog(name);
  await waitFor(`${name} ticking`, 120_000, async () => ((lastTick(log, name) ?? -1) >= 2 ? true : undefined), 250);
  return { name, uuid };
}

/** Records when each new console tick was first seen (every 50 ms). */
class TickSampler {
  private running = true;
  readonly seen: { tick: number; at: number }[] = [];
  private readonly loop: Promise<void>;

  constructor(private readonly log: string, private readonly vm: string) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const t = lastTick(this.log, this.vm);
      if (t !== undefined && t !== this.seen.at(-1)?.tick) this.seen.push({ tick: t, at: realClock.now() });
      await realClock.sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  maxGap(): number {
    let gap = 0;
    for (let i = 1; i < this.seen.length; i++) gap = Math.max(gap, this.seen[i]!.at - this.seen[i - 1]!.at);
    return gap;
  }
}

/** How a migration is asked for: `pvc vm migrate --target <to> [--force-live]` or `pvc vm unmigrate`. */
export type MigrationKind = 'migrate' | 'migrate-live' | 'unmigrate';

/** The `pvc` arguments of a migration of `vm` to `to`. */
export function migrationArgs(kind: MigrationKind, vm: string, to: string): string[] {
  if (kind === 'unmigrate') return ['vm', 'unmigrate', vm];
  return ['vm', 'migrate', vm, '--target', to, ...(kind === 'migrate-live' ? ['--force-live'] : [])];
}

/**
 * Asks for the migration through `pvc` and waits for the guest to run on `to` only with
 * `state=start`; then for two more ticks (it keeps running). Timed from the CLI's write.
 */
export async function migrate(fc: Pick<FailoverCluster, 'cluster' | 'zk' | 'cli'>, g: MigGuest, from: ClusterHost, to: ClusterHost, kind: MigrationKind = 'migrate'): Promise<MigrationRun> {
  const p = paths.domain(g.uuid);
  const consoleLog = fc.cluster.guest.consoleLog(g.name);
  const sampler = new TickSampler(consoleLog, g.name);
  await realClock.sleep(1500);
  const ticksBefore = lastTick(consoleLog, g.name) ?? -1;
  // `lastnode` is written by the CLI's one transaction (state, node, lastnode) and by nothing else
  // on the way to success, so its modification time on the ZK server is the moment of the ask.
  const before = (await fc.zk.get(p.lastNode)).stat.version;
  await fc.cli.ok(...migrationArgs(kind, g.name, to.name));
  const written = await fc.zk.get(p.lastNode);
  if (written.stat.version === before) throw new Error(`pvc ${migrationArgs(kind, g.name, to.name).join(' ')} wrote nothing`);
  const t0 = written.stat.mtime;
  try {
    await waitFor(`${g.name} on ${to.name} only, state start`, 180_000, async () => {
      const [st, onTo, onFrom] = await Promise.all([fc.zk.read(p.state), runningOn(to), runningOn(from)]);
      return st === 'start' && onTo.includes(g.uuid) && !onFrom.includes(g.uuid) ? true : undefined;
    }, 100);
    const doneAt = realClock.now();
    const totalMs = doneAt - t0;
    await waitFor(`${g.name} ticking on ${to.name}`, 30_000, async () => ((lastTick(consoleLog, g.name) ?? -1) >= ticksBefore + 3 ? true : undefined), 200);
    return {
      from: from.name, to: to.name, totalMs, startedAt: t0, doneAt, tickGapMs: sampler.maxGap(),
      ticksBefore, ticksAfter: lastTick(consoleLog, g.name) ?? -1,
    };
  } finally {
    await sampler.stop();
  }
}

/** Every tick number in the console log, in order (a reboot would restart the count). */
export function allTicks(fc: Pick<FailoverCluster, 'cluster'>, g: MigGuest): number[] {
  return [...readTicks(fc.cluster.guest.consoleLog(g.name), g.name)];
}

function* readTicks(file: string, vm: string): Generator<number> {
  // lastTick reads the whole file; a full scan needs its own regex.
  const text = requireText(file);
  for (const m of text.matchAll(new RegExp(`pvc-guest ${vm} tick (\\d+)`, 'g'))) yield Number(m[1]);
}

function requireText(file: string): string {
  return readFileSync(file, 'utf8');
}

/** One line per run, for logs and the benchmark. */
export function formatRun(r: MigrationRun): string {
  return `${r.from} → ${r.to}: total ${(r.totalMs / 1000).toFixed(2)} s, largest console tick gap ${r.tickGapMs} ms (ticks ${r.ticksBefore} → ${r.ticksAfter})`;
}
