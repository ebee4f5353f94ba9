import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import { freePort } from './ports.js';

/** Options of a standalone test server. Short ticks make session-expiry tests fast. */
export interface ZkServerOptions {
  /** ZK tick in ms (default 200): min session timeout = 2 ticks unless set. */
  tickTimeMs?: number;
  minSessionTimeoutMs?: number;
  /** Upper bound the server grants (default 6000). */
  maxSessionTimeoutMs?: number;
  /** How long to wait for `imok` (default 30 s). */
  startTimeoutMs?: number;
  /**
   * Address the server listens on (default 127.0.0.1); `0.0.0.0` lets a client in another network
   * namespace reach it through a link to this one.
   */
  clientPortAddress?: string;
}

/** Jars a standalone server needs, from Debian's `zookeeper` and `libslf4j-java` packages. */
const JAR_DIR = '/usr/share/java';
const JARS = ['zookeeper.jar', 'zookeeper-jute.jar', 'slf4j-api.jar', 'slf4j-simple.jar'];

/** Fails loudly, naming what is missing, when java or the ZooKeeper jars are not installed. */
export function zkClasspath(): string {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) {
    throw new Error(
      'ZooKeeper integration tests need Java, but `java -version` failed ' +
        `(${java.error?.message ?? `exit ${java.status}`}). Install it: apt-get install default-jre-headless zookeeper`,
    );
  }
  const missing = JARS.map((j) => join(JAR_DIR, j)).filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new Error(
      `ZooKeeper integration tests need the ZooKeeper jars; missing: ${missing.join(', ')}. ` +
        'Install them: apt-get install zookeeper',
    );
  }
  return JARS.map((j) => join(JAR_DIR, j)).join(':');
}

/** Answers Zookeeper's `ruok` four-letter command ('' when nothing answers). */
export function fourLetter(port: number, cmd = 'ruok', timeoutMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const s = connect(port, '127.0.0.1');
    s.setTimeout(timeoutMs, () => s.destroy());
    s.on('connect', () => s.write(cmd));
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', () => resolve(''));
  });
}

/**
 * Kills the server if this test process dies without cleaning up (test-runner timeout, SIGKILL):
 * a detached shell polls our pid once a second. Invariant: no test leaves a JVM behind.
 */
export function watchdog(javaPid: number | undefined): ChildProcess | undefined {
  if (javaPid === undefined) return undefined;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${javaPid} 2>/dev/null`;
  const w = spawn('sh', ['-c', script], { stdio: 'ignore', detached: true });
  w.unref();
  return w;
}

/**
 * A standalone ZooKeeper 3.8 server for integration tests: its own temp data dir, a free
 * loopback port, 4lw commands whitelisted, short ticks. `stop()`/`restart()` keep the port and the
 * data (sessions survive a restart within their timeout); `kill()` is SIGKILL.
 */
export class ZkTestServer {
  private child: ChildProcess | undefined;
  private watchdog: ChildProcess | undefined;
  private readonly onExit = (): void => {
    this.child?.kill('SIGKILL');
  };

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly classpath: string,
    private readonly startTimeoutMs: number,
  ) {}

  /** Writes the config, starts the server and waits for `imok`. */
  static async start(opts: ZkServerOptions = {}): Promise<ZkTestServer> {
    const classpath = zkClasspath();
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'pvc-zk-'));
    const tick = opts.tickTimeMs ?? 200;
    mkdirSync(join(dir, 'data'));
    writeFileSync(
      join(dir, 'zoo.cfg'),
      [
        `tickTime=${tick}`,
        `dataDir=${join(dir, 'data')}`,
        `clientPort=${port}`,
        `clientPortAddress=${opts.clientPortAddress ?? '127.0.0.1'}`,
        `minSessionTimeout=${opts.minSessionTimeoutMs ?? tick * 2}`,
        `maxSessionTimeout=${opts.maxSessionTimeoutMs ?? 6000}`,
        '4lw.commands.whitelist=*',
        'admin.enableServer=false',
        'maxClientCnxns=0',
        '',
      ].join('\n'),
    );
    const server = new ZkTestServer(port, dir, classpath, opts.startTimeoutMs ?? 30_000);
    await server.launch();
    return server;
  }

  /** `host:port` for clients. */
  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Graceful stop (SIGTERM), waiting for the process to exit. Data and port are kept. */
  async stop(): Promise<void> {
    await this.terminate('SIGTERM');
  }

  /** SIGKILL, waiting for the process to exit. */
  async kill(): Promise<void> {
    await this.terminate('SIGKILL');
  }

  /** Stops and starts again on the same port with the same data. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Starts a stopped (or killed) server again on the same port with the same data. */
  async start(): Promise<void> {
    if (!this.running) await this.launch();
  }

  /** Stops the server (if running) and removes its directory. */
  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's log (for failure messages). */
  log(): string {
    const p = join(this.dir, 'zookeeper.log');
    return existsSync(p) ? readFileSync(p, 'utf8') : '';
  }

  private async launch(): Promise<void> {
    const fd = openSync(join(this.dir, 'zookeeper.log'), 'a');
    const args = [
      '-Xms32m', '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
      '-Dzookeeper.admin.enableServer=false', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp', this.classpath, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', join(this.dir, 'zoo.cfg'),
    ];
    const child = spawn('java', args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.child = child;
    process.once('exit', this.onExit);
    this.watchdog = watchdog(child.pid);
    const deadline = realClock.now() + this.startTimeoutMs;
    while (realClock.now() < deadline) {
      if (!this.running) {
        throw new Error(`ZooKeeper exited during start (code ${child.exitCode}); log:\n${this.log().slice(-3000)}`);
      }
      if ((await fourLetter(this.port)) === 'imok') return;
      await realClock.sleep(50);
    }
    await this.kill();
    throw new Error(`ZooKeeper did not answer imok on port ${this.port} within ${this.startTimeoutMs} ms; log:\n${this.log().slice(-3000)}`);
  }

  private async terminate(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.watchdog?.kill('SIGKILL');
    this.watchdog = undefined;
    process.removeListener('exit', this.onExit);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const ac = new AbortController();
    const inTime = await Promise.race([exited.then(() => true), realClock.sleep(10_000, ac.signal).then(() => false)]);
    ac.abort();
    if (!inTime) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}
