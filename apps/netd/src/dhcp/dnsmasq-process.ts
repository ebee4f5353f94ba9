/**
 * One managed network's dnsmasq, run by netd on the primary (pvc-inventory §7.2, §4.1 phases B
 * and G): started on takeover, stopped on relinquish, restarted when the network's parameters
 * change, SIGHUPed when reservations change, and restarted after a delay when it dies.
 *
 * State machine (each transition logged once, with its reason):
 * `stopped` → `starting` → `running` → (`stopping` → `stopped`) | (crash → `backoff` → `starting`).
 *
 * Contracts:
 * - Operations are serialised: a start, update, stop or reload waits for the one before it.
 * - {@link DnsmasqProcess.start} resolves once dnsmasq has stayed up for `startCheckMs`; if it exits
 *   before, start rejects with `DNSMASQ_START_FAILED` (the log's last lines in the message) and the
 *   manager is `stopped`: no retry loop runs behind a caller that was told "failed".
 * - After a successful start, an exit nobody asked for is a crash: logged, then a new start after
 *   `restartDelayMs`, doubling per consecutive crash up to `maxRestartDelayMs` (reset once dnsmasq
 *   stayed up `stableMs`). A stop cancels a pending restart.
 * - A stop sends SIGTERM, then SIGKILL after `stopGraceMs` (the original: TERM, 0.2 s, KILL), and
 *   waits for the exit (bounded by `killWaitMs`).
 * - Before starting, a dnsmasq of the same network left by an earlier netd (found through the pid
 *   file) is stopped the same way: it would hold the gateway's port.
 * - dnsmasq's stderr (start-up errors) is appended to its log file.
 */
import type { Clock, Exec, ExecChild, Logger } from '@pvc/runtime';
import { describeError } from '@pvc/runtime';
import { dnsmasqArgs, dnsmasqEnv, type DnsmasqNetwork, type HookZk } from './dnsmasq-args.js';
import { DhcpError } from './errors.js';
import type { DnsmasqHost } from './host-files.js';
import { handInitLeases, type InitLeasesSource } from './init-leases.js';
import { dnsmasqLayout, type DnsmasqDirectories, type DnsmasqLayout } from './layout.js';
import type { Reservation } from './reservations.js';

/** The manager's states. */
export type DnsmasqState = 'stopped' | 'starting' | 'running' | 'backoff' | 'stopping';

/** Time bounds of the manager (ms). */
export interface DnsmasqTiming {
  readonly startCheckMs: number;
  readonly stopGraceMs: number;
  readonly killWaitMs: number;
  readonly restartDelayMs: number;
  readonly maxRestartDelayMs: number;
  readonly stableMs: number;
}

export const DEFAULT_DNSMASQ_TIMING: DnsmasqTiming = Object.freeze({
  startCheckMs: 500,
  stopGraceMs: 1000,
  killWaitMs: 2000,
  restartDelayMs: 1000,
  maxRestartDelayMs: 30_000,
  stableMs: 60_000,
});

/** Dependencies of {@link DnsmasqProcess}. */
export interface DnsmasqProcessDeps {
  readonly exec: Exec;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly host: DnsmasqHost;
  /** `dynamic_directory` and `log_directory` from the config. */
  readonly dirs: DnsmasqDirectories;
  /** Where the lease hook finds Zookeeper (`cluster.coordinators`, `database.zookeeper.port`). */
  readonly zk: HookZk;
  /** The lease hook command the wrapper runs (`defaultHookCommand()`). */
  readonly hookCommand: readonly string[];
  /** The network's stored leases for the hook's `init` ({@link handInitLeases}); absent = the hook reads them. */
  readonly initLeases?: InitLeasesSource;
  /** The dnsmasq command; default `['/usr/sbin/dnsmasq']` (tests prefix `ip netns exec <ns>`). */
  readonly command?: readonly string[];
  readonly timing?: Partial<DnsmasqTiming>;
}

interface Run {
  readonly child: ExecChild;
  readonly startedAt: number;
  readonly signature: string;
  readonly exit: Promise<number>;
  exited: boolean;
  phase: 'checking' | 'up' | 'stopping';
}

/** The dnsmasq of one managed network (see the module comment). */
export class DnsmasqProcess {
  private current: DnsmasqState = 'stopped';
  private wanted: { network: DnsmasqNetwork; reservations: readonly Reservation[] } | undefined;
  private run: Run | undefined;
  private backoff: AbortController | undefined;
  private crashes = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly layout: DnsmasqLayout;
  private readonly timing: DnsmasqTiming;
  private readonly log: Logger;

  constructor(readonly vni: string, private readonly deps: DnsmasqProcessDeps) {
    this.layout = dnsmasqLayout(deps.dirs, vni);
    this.timing = { ...DEFAULT_DNSMASQ_TIMING, ...deps.timing };
    this.log = deps.logger.child({ vni });
  }

  get state(): DnsmasqState {
    return this.current;
  }

  /** The running dnsmasq's pid, if any. */
  get pid(): number | undefined {
    return this.run?.child.pid;
  }

  /**
   * Runs dnsmasq for `network` with `reservations`. Already running with the same command line:
   * only the reservations are synced. With another: restarted. Throws `DHCP_BAD_NETWORK`,
   * `DHCP_FILES` or `DNSMASQ_START_FAILED` (then the manager is stopped).
   */
  start(network: DnsmasqNetwork, reservations: readonly Reservation[] = []): Promise<void> {
    return this.enqueue(() => this.doStart(network, reservations));
  }

  /** Applies changed parameters while running or restarting (a restart if the command line changed); a no-op when stopped. */
  update(network: DnsmasqNetwork, reservations?: readonly Reservation[]): Promise<void> {
    return this.enqueue(async () => {
      if (!this.wanted) return;
      await this.doStart(network, reservations ?? this.wanted.reservations);
    });
  }

  /** Rewrites the hosts files and SIGHUPs dnsmasq when one changed. Remembered while stopped. */
  setReservations(reservations: readonly Reservation[]): Promise<void> {
    return this.enqueue(async () => {
      if (!this.wanted) return;
      this.wanted = { ...this.wanted, reservations };
      if (await this.deps.host.syncReservations(this.vni, this.layout, reservations)) this.hangUp('reservations changed');
    });
  }

  /** SIGHUP: dnsmasq re-reads the hosts directory (and reports its leases as `old`). */
  reload(reason = 'reload asked'): Promise<void> {
    return this.enqueue(() => Promise.resolve(this.hangUp(reason)));
  }

  /** Stops dnsmasq (TERM, then KILL) and cancels a pending restart. Never throws. */
  stop(reason = 'stop asked'): Promise<void> {
    return this.enqueue(async () => {
      this.wanted = undefined;
      this.cancelBackoff();
      if (this.run) await this.terminate(this.run, reason);
      this.transition('stopped', reason);
    });
  }

  /**
   * Stops dnsmasq and removes the network's hosts directory and pid file (network removed, or this
   * node no longer serves it: a later start writes the hosts directory again).
   */
  async remove(reason = 'network removed'): Promise<void> {
    await this.stop(reason);
    await this.enqueue(() => this.deps.host.removeFiles(this.layout));
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const next = this.queue.then(op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private transition(next: DnsmasqState, reason: string): void {
    if (next === this.current) return;
    this.log.info({ from: this.current, to: next, reason }, `dnsmasq ${next}`);
    this.current = next;
  }

  private hangUp(reason: string): void {
    if (this.run?.phase !== 'up') return;
    this.run.child.kill('SIGHUP');
    this.log.info({ reason }, 'dnsmasq sent SIGHUP');
  }

  private async doStart(network: DnsmasqNetwork, reservations: readonly Reservation[]): Promise<void> {
    if (network.vni !== this.vni) throw new DhcpError('DHCP_BAD_NETWORK', this.vni, `network ${network.vni} given to the dnsmasq of network ${this.vni}`);
    const signature = JSON.stringify([dnsmasqArgs(network, this.layout), dnsmasqEnv(network, this.deps.zk)]);
    this.wanted = { network, reservations };
    if (this.run && this.run.signature === signature) {
      if (await this.deps.host.syncReservations(this.vni, this.layout, reservations)) this.hangUp('reservations changed');
      return;
    }
    if (this.run) await this.terminate(this.run, 'parameters changed: restart');
    if (this.current === 'backoff' && this.backoff) {
      // A crash restart is pending: it will use the new parameters.
      return;
    }
    this.crashes = 0;
    try {
      await this.launch(signature, this.current === 'stopped' ? 'start asked' : 'parameters changed');
    } catch (err) {
      this.wanted = undefined;
      this.transition('stopped', `start failed: ${describeError(err)}`);
      throw err;
    }
  }

  /** Spawns dnsmasq and waits `startCheckMs`; throws when it exits before. */
  private async launch(signature: string, reason: string): Promise<void> {
    const wanted = this.wanted;
    if (!wanted) return;
    this.transition('starting', reason);
    const args = dnsmasqArgs(wanted.network, this.layout);
    try {
      await this.deps.host.prepare(this.layout, this.deps.hookCommand);
      await this.stopLeftover();
      await this.deps.host.syncReservations(this.vni, this.layout, wanted.reservations);
    } catch (err) {
      if (err instanceof DhcpError) throw err;
      throw new DhcpError('DHCP_FILES', this.vni, `${this.layout.dir}: dnsmasq files not prepared: ${describeError(err)}`, err);
    }
    const command = this.deps.command ?? ['/usr/sbin/dnsmasq'];
    const env = { ...dnsmasqEnv(wanted.network, this.deps.zk), ...(await handInitLeases(this.deps.initLeases, this.deps.host, this.layout, this.log)) };
    // sh appends dnsmasq's stderr (start-up errors) to the log, then becomes dnsmasq (exec).
    const child = this.deps.exec.spawn('/bin/sh', ['-c', 'exec "$@" 2>>"$0"', this.layout.logFile, ...command, ...args], { env });
    const run: Run = { child, startedAt: this.deps.clock.now(), signature, exit: child.exited, exited: false, phase: 'checking' };
    this.run = run;
    void run.exit.then((code) => {
      run.exited = true;
      this.onExit(run, code);
    });
    if (await this.exitedWithin(run, this.timing.startCheckMs)) {
      this.run = undefined;
      const tail = await this.deps.host.logTail(this.layout, 3);
      throw new DhcpError('DNSMASQ_START_FAILED', this.vni, `dnsmasq for network ${this.vni} exited at start${tail ? `: ${tail.split('\n').join(' | ')}` : ''} (log ${this.layout.logFile})`);
    }
    run.phase = 'up';
    this.log.info({ pid: child.pid, args: args.join(' ') }, 'dnsmasq started');
    this.transition('running', reason);
  }

  private onExit(run: Run, code: number): void {
    if (this.run !== run || run.phase !== 'up') return;
    this.run = undefined;
    const uptimeMs = this.deps.clock.now() - run.startedAt;
    if (uptimeMs >= this.timing.stableMs) this.crashes = 0;
    this.scheduleRestart(`dnsmasq exited unexpectedly (code ${code}) after ${uptimeMs} ms`);
  }

  private scheduleRestart(reason: string): void {
    this.crashes += 1;
    const delayMs = Math.min(this.timing.restartDelayMs * 2 ** (this.crashes - 1), this.timing.maxRestartDelayMs);
    this.log.error({ reason, restartInMs: delayMs, crashes: this.crashes }, 'dnsmasq is down; restarting after a delay');
    this.transition('backoff', reason);
    const ac = new AbortController();
    this.backoff = ac;
    this.deps.clock.sleep(delayMs, ac.signal).then(
      () => void this.enqueue(() => this.restart(ac)),
      () => undefined,
    );
  }

  private async restart(ac: AbortController): Promise<void> {
    if (this.backoff !== ac || !this.wanted) return;
    this.backoff = undefined;
    const network = this.wanted.network;
    try {
      await this.launch(JSON.stringify([dnsmasqArgs(network, this.layout), dnsmasqEnv(network, this.deps.zk)]), 'restart after a crash');
    } catch (err) {
      this.scheduleRestart(`restart failed: ${describeError(err)}`);
    }
  }

  private cancelBackoff(): void {
    this.backoff?.abort();
    this.backoff = undefined;
  }

  private async exitedWithin(run: Run, ms: number): Promise<boolean> {
    if (run.exited) return true;
    const ac = new AbortController();
    const slept = this.deps.clock.sleep(ms, ac.signal).then(() => false, () => false);
    const done = await Promise.race([run.exit.then(() => true), slept]);
    ac.abort();
    return done;
  }

  private async terminate(run: Run, reason: string): Promise<void> {
    run.phase = 'stopping';
    this.transition('stopping', reason);
    run.child.kill('SIGTERM');
    if (!(await this.exitedWithin(run, this.timing.stopGraceMs))) {
      this.log.warn({ graceMs: this.timing.stopGraceMs }, 'dnsmasq did not stop on SIGTERM; sending SIGKILL');
      run.child.kill('SIGKILL');
      if (!(await this.exitedWithin(run, this.timing.killWaitMs))) this.log.error({ pid: run.child.pid }, 'dnsmasq did not exit after SIGKILL');
    }
    if (this.run === run) this.run = undefined;
    this.log.info({ reason }, 'dnsmasq stopped');
  }

  private async stopLeftover(): Promise<void> {
    const pid = await this.deps.host.findLeftover(this.layout);
    if (pid === undefined) return;
    this.log.warn({ pid }, 'stopping a dnsmasq of this network left by an earlier netd');
    const gone = async (ms: number): Promise<boolean> => {
      for (let waited = 0; waited < ms; waited += 50) {
        if (!this.deps.host.signal(pid, 0)) return true;
        await this.deps.clock.sleep(50);
      }
      return !this.deps.host.signal(pid, 0);
    };
    this.deps.host.signal(pid, 'SIGTERM');
    if (await gone(this.timing.stopGraceMs)) return;
    this.deps.host.signal(pid, 'SIGKILL');
    await gone(this.timing.killWaitMs);
  }
}
