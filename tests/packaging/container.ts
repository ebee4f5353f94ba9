// A container running a real systemd as its PID 1 (../shared/design/environment.md, "systemd"):
// systemd-nspawn boots the machine's own systemd on a tmpfs root with the host's /usr behind an
// overlay (so packages can be installed; the host's /usr is untouched) and the host's network.
// dpkg inside works on a copy of the host's package database (it must know what /usr holds, to
// check the packages' dependencies). Root only.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '../support/wait.js';

/** Result of a command run inside the container. */
export interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Fails loudly, naming what is missing, when the container cannot be made here. */
export function checkPrerequisites(): void {
  if (process.getuid?.() !== 0) throw new Error('the packaging tests boot a systemd container: run them as root');
  for (const tool of ['systemd-nspawn', 'nsenter', 'dpkg-deb']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      throw new Error(`${tool} is missing: install systemd-container, util-linux and dpkg (scripts/setup.sh does)`);
    }
  }
}

/** A booted container; `run` executes a command in all its namespaces with a clean environment. */
export class SystemdContainer {
  private constructor(
    readonly name: string,
    private readonly dir: string,
    private readonly nspawn: ChildProcess,
    /** The container's PID 1 (systemd), as seen from the host. */
    readonly init: number,
  ) {}

  /** Boots a container with `binds` (`host:container`, read-only) and waits for systemd to be up. */
  static async boot(name: string, binds: string[] = []): Promise<SystemdContainer> {
    const dir = mkdtempSync(join(tmpdir(), 'pvc-nspawn-'));
    const upper = join(dir, 'usr-upper');
    const dpkgDb = join(dir, 'dpkg');
    mkdirSync(upper);
    cpSync('/var/lib/dpkg', dpkgDb, { recursive: true });
    // The host's overrides name system groups (ssl-cert, …) the container's empty /etc lacks.
    writeFileSync(join(dpkgDb, 'statoverride'), '');
    const args = [
      '--register=no', '--keep-unit', '--volatile=yes', '-D', '/', '-M', name, '--console=pipe',
      `--overlay=/usr:${upper}:/usr`, `--bind=${dpkgDb}:/var/lib/dpkg`,
      '--bind-ro=/etc/hosts', '--bind-ro=/etc/nsswitch.conf',
      ...binds.map((b) => `--bind-ro=${b}`),
      '-b', 'systemd.firstboot=off',
    ];
    const log = join(dir, 'console.log');
    const out = (): string => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    const nspawn = spawn('systemd-nspawn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    nspawn.stdout?.on('data', (d: Buffer) => writeFileSync(log, d, { flag: 'a' }));
    nspawn.stderr?.on('data', (d: Buffer) => writeFileSync(log, d, { flag: 'a' }));
    const init = await waitUntil(
      () => {
        if (nspawn.exitCode !== null) throw new Error(`systemd-nspawn exited ${nspawn.exitCode}: ${out().slice(-2000)}`);
        return childOf(nspawn.pid as number, 'systemd');
      },
      { what: `systemd as PID 1 of container ${name}`, timeoutMs: 30_000, intervalMs: 100 },
    );
    const c = new SystemdContainer(name, dir, nspawn, init as number);
    // `degraded` is expected in a container (units that need hardware or a real boot fail).
    await waitUntil(() => c.run('systemctl', ['is-system-running']).stdout.trim(), {
      what: `container ${name}'s systemd to finish booting`, timeoutMs: 60_000, intervalMs: 200,
      until: (s) => s === 'running' || s === 'degraded',
    });
    return c;
  }

  /** Runs a command inside the container (root, all namespaces, a clean environment). */
  run(cmd: string, args: string[] = [], input?: string): RunResult {
    const r = spawnSync('nsenter', ['-t', String(this.init), '-a', 'env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8', cmd, ...args], {
      encoding: 'utf8', input, timeout: 120_000,
    });
    return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  /** Like `run`, and throws with the output unless it exits 0. */
  ok(cmd: string, args: string[] = [], input?: string): string {
    const r = this.run(cmd, args, input);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${this.name}) exited ${r.status}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** One property of a unit (`systemctl show -p`). */
  prop(unit: string, property: string): string {
    return this.ok('systemctl', ['show', unit, '-p', property, '--value']).trim();
  }

  /** A unit's main PID (0 when not running). */
  mainPid(unit: string): number {
    return Number(this.prop(unit, 'MainPID'));
  }

  /** Lines of the journal for one syslog identifier. */
  journal(identifier: string): string {
    return this.run('journalctl', ['-t', identifier, '--no-pager', '-o', 'cat']).stdout;
  }

  /** Powers the container off (SIGKILL to nspawn after 30 s) and removes its files. */
  async stop(): Promise<void> {
    if (this.nspawn.exitCode === null) {
      const exited = new Promise((r) => this.nspawn.once('exit', r));
      this.run('systemctl', ['poweroff', '--no-block']);
      const timer = setTimeout(() => this.nspawn.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The child of `pid` whose command name is `comm`, if any. */
function childOf(pid: number, comm: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const name = /\((.*)\)/.exec(stat)?.[1];
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && name === comm) return Number(d);
    } catch {
      // gone
    }
  }
  return undefined;
}
