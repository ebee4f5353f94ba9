import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import { zooCfgTimingLines } from '@pvc/zk';
import { freePort } from './ports.js';
import { fourLetter, watchdog, zkClasspath } from './zk-server.js';

/** Options of {@link ZkTestEnsemble.start}. */
export interface ZkEnsembleOptions {
  /** Servers (odd; default 3). */
  size?: number;
  /** Heap of each JVM, MiB (default 256). */
  heapMiB?: number;
  /** How long to wait for a leader and every server serving (default 60 s). */
  startTimeoutMs?: number;
}

/** One server of the ensemble. */
export interface EnsembleServer {
  readonly id: number;
  readonly clientPort: number;
  readonly dir: string;
  child: ChildProcess | undefined;
  watchdog: ChildProcess | undefined;
}

/** `srvr`'s Mode line: leader, follower, standalone… or `down` when nothing answers. */
export function serverMode(srvr: string): string {
  return /^Mode: (\w+)/m.exec(srvr)?.[1] ?? 'down';
}

/**
 * A real ZooKeeper 3.8 ensemble on loopback for benches and tests: `size` servers (QuorumPeerMain),
 * each with its own temp dir (zoo.cfg, data/myid, log), free client/quorum/election ports, the
 * timing PVC ships for its coordinators (`zooCfgTimingLines`, deploy/zookeeper/zoo.cfg) and 4lw
 * commands whitelisted. Invariant: no JVM outlives this process (exit hook + detached watchdog),
 * and `destroy()` removes every data dir.
 */
export class ZkTestEnsemble {
  private readonly onExit = (): void => {
    for (const s of this.servers) s.child?.kill('SIGKILL');
  };

  private constructor(
    readonly servers: readonly EnsembleServer[],
    readonly root: string,
    private readonly classpath: string,
    private readonly heapMiB: number,
  ) {}

  /** Writes the configs, starts every server and waits until one leads and all serve. */
  static async start(opts: ZkEnsembleOptions = {}): Promise<ZkTestEnsemble> {
    const size = opts.size ?? 3;
    if (size < 1 || size % 2 === 0) throw new Error(`ensemble size ${size}: must be odd`);
    const classpath = zkClasspath();
    const root = mkdtempSync(join(tmpdir(), 'pvc-zk-ensemble-'));
    const ports = [];
    for (let i = 0; i < size; i++) ports.push({ client: await freePort(), quorum: await freePort(), election: await freePort() });
    const peers = ports.map((p, i) => `server.${i + 1}=127.0.0.1:${p.quorum}:${p.election}`);
    const servers: EnsembleServer[] = ports.map((p, i) => {
      const dir = join(root, `zk${i + 1}`);
      mkdirSync(join(dir, 'data'), { recursive: true });
      writeFileSync(join(dir, 'data', 'myid'), `${i + 1}\n`);
      writeFileSync(join(dir, 'zoo.cfg'), [
        ...zooCfgTimingLines(),
        `dataDir=${join(dir, 'data')}`, `clientPort=${p.client}`, 'clientPortAddress=127.0.0.1',
        'maxClientCnxns=0', '4lw.commands.whitelist=*', 'admin.enableServer=false', ...peers, '',
      ].join('\n'));
      return { id: i + 1, clientPort: p.client, dir, child: undefined, watchdog: undefined };
    });
    const ensemble = new ZkTestEnsemble(servers, root, classpath, opts.heapMiB ?? 256);
    process.once('exit', ensemble.onExit);
    try {
      for (const s of servers) ensemble.launch(s);
      await ensemble.waitServing(opts.startTimeoutMs ?? 60_000);
    } catch (err) {
      await ensemble.destroy();
      throw err;
    }
    return ensemble;
  }

  /** Connection string of every server. */
  get connectString(): string {
    return this.servers.map((s) => `127.0.0.1:${s.clientPort}`).join(',');
  }

  /** `host:port` of every server (the `hosts` of a ZK client). */
  get hosts(): string[] {
    return this.servers.map((s) => `127.0.0.1:${s.clientPort}`);
  }

  /** The JVMs' pids (for /proc CPU figures). */
  pids(): number[] {
    return this.servers.flatMap((s) => (s.child?.pid === undefined ? [] : [s.child.pid]));
  }

  /** Each server's answer to a four-letter word (`mntr`, `srvr`, `cons`…). */
  fourLetter(word: string, timeoutMs = 2_000): Promise<string[]> {
    return Promise.all(this.servers.map((s) => fourLetter(s.clientPort, word, timeoutMs)));
  }

  /** Each server's mode (`leader`, `follower`, `down`…). */
  async modes(): Promise<string[]> {
    return (await this.fourLetter('srvr')).map(serverMode);
  }

  /** A server's log (for failure messages). */
  log(id: number): string {
    const p = join(this.root, `zk${id}`, 'zookeeper.log');
    return existsSync(p) ? readFileSync(p, 'utf8') : '';
  }

  /** SIGKILLs every server, waits for them to exit and removes the whole directory. */
  async destroy(): Promise<void> {
    process.removeListener('exit', this.onExit);
    await Promise.all(this.servers.map(async (s) => {
      const child = s.child;
      s.child = undefined;
      s.watchdog?.kill('SIGKILL');
      s.watchdog = undefined;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }));
    rmSync(this.root, { recursive: true, force: true });
  }

  private launch(s: EnsembleServer): void {
    const fd = openSync(join(s.dir, 'zookeeper.log'), 'a');
    const args = [
      `-Xms${Math.min(64, this.heapMiB)}m`, `-Xmx${this.heapMiB}m`, '-XX:+UseSerialGC',
      '-Dzookeeper.admin.enableServer=false', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp', this.classpath, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', join(s.dir, 'zoo.cfg'),
    ];
    s.child = spawn('java', args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    s.watchdog = watchdog(s.child.pid);
  }

  private async waitServing(timeoutMs: number): Promise<void> {
    const deadline = realClock.now() + timeoutMs;
    let modes: string[] = [];
    while (realClock.now() < deadline) {
      const dead = this.servers.find((s) => !s.child || s.child.exitCode !== null || s.child.signalCode !== null);
      if (dead) throw new Error(`ZooKeeper server ${dead.id} exited during start; log:\n${this.log(dead.id).slice(-3000)}`);
      modes = await this.modes();
      if (modes.filter((m) => m === 'leader').length === 1 && modes.every((m) => m === 'leader' || m === 'follower')) return;
      await realClock.sleep(200);
    }
    throw new Error(`ZooKeeper ensemble not serving within ${timeoutMs} ms (modes: ${modes.join(', ')}); log of server 1:\n${this.log(1).slice(-3000)}`);
  }
}
