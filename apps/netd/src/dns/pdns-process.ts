/**
 * The aggregator's `pdns_server`, run by netd on the primary (pvc-inventory §7.3), and the port the
 * aggregator drives it through.
 *
 * State machine (each transition logged once, with its reason):
 * `stopped` → `starting` → `running` → `stopping` → `stopped`; an exit nobody asked for → `stopped`
 * (logged as an error; the aggregator's next pass starts it again, so a crash costs at most one
 * pass period, and a failing start is retried with the pass's backoff).
 *
 * Contracts:
 * - Operations are serialised.
 * - {@link PdnsProcess.ensureRunning} resolves once pdns_server has stayed up `startCheckMs`; if it
 *   exits before, it rejects with `PDNS_START_FAILED` carrying the log's last lines.
 * - Before a start, a pdns_server left by an earlier netd on the same socket directory is asked
 *   to quit (`pdns_control quit`): it would hold the port.
 * - A stop sends SIGTERM, then SIGKILL after `stopGraceMs`, and waits for the exit (bounded).
 * - pdns_server's stdout and stderr are appended to its log file (`pdns-aggregator.log`).
 *
 * @module
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describeError, type Clock, type Exec, type ExecChild, type Logger } from '@pvc/runtime';
import { DnsError } from './errors.js';
import { pdnsArgs, pdnsConfigFile, type AggregatorSettings } from './settings.js';

/** What the aggregator needs of pdns_server. */
export interface PdnsPort {
  /** Starts pdns_server unless it runs; throws `DnsError` `PDNS_START_FAILED`. */
  ensureRunning(reason: string): Promise<void>;
  /** `pdns_control reload <domain>`, then `purge <domain>$` (PowerDNS's caches of the zone dropped). Throws on failure. */
  reload(domain: string): Promise<void>;
  /** Stops pdns_server; never throws. */
  stop(reason: string): Promise<void>;
}

/** The process's states. */
export type PdnsState = 'stopped' | 'starting' | 'running' | 'stopping';

/** Dependencies of {@link PdnsProcess}. */
export interface PdnsProcessDeps {
  readonly exec: Exec;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: Omit<AggregatorSettings, 'upstreamDomain'>;
  /** Default `/usr/sbin/pdns_server` and `/usr/bin/pdns_control`. */
  readonly binaries?: { readonly server: string; readonly control: string };
  readonly timing?: Partial<{ startCheckMs: number; stopGraceMs: number; killWaitMs: number }>;
}

interface Run {
  readonly child: ExecChild;
  readonly exit: Promise<number>;
  exited: boolean;
  wanted: boolean;
}

/** The real pdns_server (see the module comment). */
export class PdnsProcess implements PdnsPort {
  private current: PdnsState = 'stopped';
  private run: Run | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timing: { startCheckMs: number; stopGraceMs: number; killWaitMs: number };
  private readonly bin: { server: string; control: string };

  constructor(private readonly deps: PdnsProcessDeps) {
    this.timing = { startCheckMs: 1_000, stopGraceMs: 1_000, killWaitMs: 2_000, ...deps.timing };
    this.bin = { server: '/usr/sbin/pdns_server', control: '/usr/bin/pdns_control', ...deps.binaries };
  }

  get state(): PdnsState {
    return this.current;
  }

  get pid(): number | undefined {
    return this.run?.child.pid;
  }

  ensureRunning(reason: string): Promise<void> {
    return this.enqueue(async () => {
      if (this.run && !this.run.exited) return;
      await this.launch(reason);
    });
  }

  async reload(domain: string): Promise<void> {
    // `reload` as the original; `purge <domain>$` drops the zone's packet and query cache entries,
    // without which a name asked for before it existed stays unanswered up to negquery-cache-ttl (60 s).
    for (const args of [['reload', domain], ['purge', `${domain}$`]]) {
      const r = await this.deps.exec.run(this.bin.control, [`--socket-dir=${this.deps.settings.socketDir}`, ...args], { timeoutMs: 5_000 });
      if (r.exitCode !== 0) throw new Error(`pdns_control ${args.join(' ')}: exit ${r.exitCode}: ${(r.stderr || r.stdout).trim()}`);
    }
  }

  stop(reason: string): Promise<void> {
    return this.enqueue(async () => {
      const run = this.run;
      if (!run) return;
      run.wanted = false;
      this.transition('stopping', reason);
      run.child.kill('SIGTERM');
      if (!(await this.exitedWithin(run, this.timing.stopGraceMs))) {
        this.deps.logger.warn({ graceMs: this.timing.stopGraceMs }, 'pdns_server did not stop on SIGTERM; sending SIGKILL');
        run.child.kill('SIGKILL');
        if (!(await this.exitedWithin(run, this.timing.killWaitMs))) this.deps.logger.error({ pid: run.child.pid }, 'pdns_server did not exit after SIGKILL');
      }
      this.run = undefined;
      this.transition('stopped', reason);
    });
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const next = this.queue.then(op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private transition(next: PdnsState, reason: string): void {
    if (next === this.current) return;
    this.deps.logger.info({ from: this.current, to: next, reason }, `pdns_server ${next}`);
    this.current = next;
  }

  private async launch(reason: string): Promise<void> {
    const s = this.deps.settings;
    this.transition('starting', reason);
    try {
      await mkdir(s.socketDir, { recursive: true, mode: 0o700 });
      await chmod(s.socketDir, 0o700);
      await writeFile(join(s.socketDir, 'pdns.conf'), pdnsConfigFile(s.database), { mode: 0o600 });
      await mkdir(dirname(s.logFile), { recursive: true });
    } catch (err) {
      this.transition('stopped', 'files not written');
      throw new DnsError('PDNS_START_FAILED', `pdns_server files in ${s.socketDir} not written: ${describeError(err)}`, err);
    }
    // A pdns_server of ours left by an earlier netd: it would hold the port.
    await this.deps.exec.run(this.bin.control, [`--socket-dir=${s.socketDir}`, 'quit'], { timeoutMs: 3_000 }).catch(() => undefined);
    const args = pdnsArgs(s);
    const child = this.deps.exec.spawn('/bin/sh', ['-c', 'exec "$@" >>"$0" 2>&1', s.logFile, this.bin.server, ...args]);
    const run: Run = { child, exit: child.exited, exited: false, wanted: true };
    this.run = run;
    void run.exit.then((code) => {
      run.exited = true;
      if (this.run === run && run.wanted && this.current === 'running') {
        this.run = undefined;
        this.deps.logger.error({ code, log: s.logFile }, 'pdns_server exited unexpectedly; started again at the next aggregator pass');
        this.transition('stopped', `exited (code ${code})`);
      }
    });
    if (await this.exitedWithin(run, this.timing.startCheckMs)) {
      this.run = undefined;
      this.transition('stopped', 'exited at start');
      const tail = await this.logTail(3);
      throw new DnsError('PDNS_START_FAILED', `pdns_server exited at start${tail ? `: ${tail}` : ''} (log ${s.logFile})`);
    }
    this.deps.logger.info({ pid: child.pid, addresses: s.listenAddresses, port: s.port }, 'pdns_server started');
    this.transition('running', reason);
  }

  private async logTail(lines: number): Promise<string> {
    try {
      const text = await readFile(this.deps.settings.logFile, 'utf8');
      return text.trim().split('\n').slice(-lines).join(' | ');
    } catch {
      return '';
    }
  }

  private async exitedWithin(run: Run, ms: number): Promise<boolean> {
    if (run.exited) return true;
    const ac = new AbortController();
    const slept = this.deps.clock.sleep(ms, ac.signal).then(() => false, () => false);
    const done = await Promise.race([run.exit.then(() => true), slept]);
    ac.abort();
    return done;
  }
}
