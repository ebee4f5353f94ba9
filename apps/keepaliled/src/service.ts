import type { Config } from '@pvc/config';
import type { Clock, Logger } from '@pvc/runtime';
import { describeError } from '@pvc/runtime';
import type { KeepaliveState } from '@pvc/rpc';
import type { ZkClient } from '@pvc/zk';
import type { Ipmi } from '@pvc/ipmi';
import { pluginDetailLine, type HealthSummary } from './health/index.js';
import type { EventSink, KeepalivedEvent } from './model.js';
import type { HostStats, Peers, SelfReset, WitnessPorts } from './ports.js';
import { FigureGatherer } from './keepalive/figures.js';
import { KeepaliveLoop } from './keepalive/keepalive.js';
import { LivenessTracker } from './fence/liveness.js';
import { Fencer } from './fence/fencer.js';
import { FenceMonitor } from './fence/monitor.js';
import { RecoveryRetry } from './fence/retry.js';
import { resetWaitMs } from './fence/rules.js';
import { PrimaryElection, primaryLeaseMs } from './primary/election.js';
import { primaryConfigKeys } from './primary/config-keys.js';
import { FaultReporter } from './faults/reporter.js';
import { SuicideWatch } from './suicide.js';
import { wireWitness } from './witness/wiring.js';
import type { WitnessServer } from './witness/serve.js';

/** The health monitor as keepaliled uses it (see `health/`). */
export interface HealthPort {
  start(): Promise<void>;
  stop(): Promise<void>;
  summary(): HealthSummary;
}

export interface KeepalivedDeps {
  config: Config;
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  peers: Peers;
  host: HostStats;
  ipmi: Ipmi;
  reset: SelfReset;
  /** The suicide peer check's ports (used when `peer_check_port` ≠ 0 and suicide is on); absent: no check. */
  witness?: WitnessPorts;
  health?: HealthPort;
  /** Process shutdown (the root signal): interrupts even an IPMI power cycle in progress. */
  shutdown?: AbortSignal;
  /** Receives every event (the simulator's log); events are logged either way. */
  events?: EventSink;
  /** The ZK session timeout this node's client uses (default 10 s): a cut-off primary drops its duties after it. */
  zkSessionTimeoutMs?: number;
  /** Staleness check period of the fence monitor (default min(interval, 1 s)). */
  fenceCheckEveryMs?: number;
}

/** Logs each event once, at a level matching its weight. */
function logEvent(logger: Logger, e: KeepalivedEvent): void {
  const serious = e.kind === 'node-dead' || e.kind === 'fence-result' || e.kind === 'suicide' || e.kind === 'vm-stopped' || e.kind === 'vm-left'
    || (e.kind === 'suicide-watch' && e.to !== 'watching');
  // The logger already carries `node` (this node); the event's node is the one it is about.
  const { node: subject, kind, ...rest } = e;
  const fields = { event: kind, subject, ...rest };
  if (serious) logger.warn(fields, kind);
  else logger.info(fields, kind);
}

/**
 * keepaliled: the node's keepalives; on coordinators also liveness tracking, fencing with VM
 * recovery, the recovery retry (on the primary), and the primary election; everywhere the suicide watch and the health plugins.
 */
export class Keepalived {
  readonly keepalive: KeepaliveLoop;
  /** The keepalive's figures and its view of the local services (down peers: the `pvcs` plugin). */
  readonly figures: FigureGatherer;
  readonly election: PrimaryElection | undefined;
  readonly liveness: LivenessTracker | undefined;
  readonly monitor: FenceMonitor | undefined;
  /** Places VMs recovery left without a target, while this node is the primary coordinator. */
  readonly retry: RecoveryRetry | undefined;
  /** Cluster faults (`/faults`), written while this node is the primary coordinator. */
  readonly faults: FaultReporter | undefined;
  readonly suicide: SuicideWatch;
  /** This coordinator's answer to other nodes' suicide peer checks (when the check is on). */
  readonly witness: WitnessServer | undefined;
  private readonly emit: EventSink;

  constructor(private readonly deps: KeepalivedDeps) {
    const { config, zk, clock, logger, peers } = deps;
    const f = config.system.fencing;
    const intervalMs = f.intervals.keepalive_interval * 1000;
    this.emit = (e) => {
      logEvent(logger, e);
      deps.events?.(e);
    };
    const logging = config.system.configuration.logging;
    this.figures = new FigureGatherer({ peers, host: deps.host, logger, clock });
    this.keepalive = new KeepaliveLoop({
      node: config.node, zk, clock, logger: logger.child({ component: 'keepalive' }), events: this.emit,
      figures: this.figures,
      settings: { intervalMs, figuresDeadlineMs: Math.min(1_000, intervalMs * 0.4), logKeepalives: logging.log_keepalives, logClusterDetails: logging.log_keepalive_cluster_details },
      logExtras: () => this.healthLogFields(),
    });
    const witness = wireWitness({ config, ports: deps.witness, zk, clock, logger, silentForMs: () => this.keepalive.silentForMs(), intervalMs });
    this.witness = witness.server;
    this.suicide = new SuicideWatch({
      self: config.node, clock, logger, events: this.emit, peers, reset: deps.reset,
      silentForMs: () => this.keepalive.silentForMs(), intervalMs, suicideIntervals: f.intervals.suicide_intervals, peerCheck: witness.check,
    });
    // The fencer's reset wait allows for other nodes' peer check when ours is configured (configs are uniform).
    const peerCheck = f.peer_check_port !== 0;
    if (!config.isCoordinator) return;
    this.liveness = new LivenessTracker({ zk, clock, logger: logger.child({ component: 'liveness' }), self: config.node, intervalMs });
    const fencer = new Fencer({
      self: config.node, zk, clock, logger: logger.child({ component: 'fence' }), events: this.emit, peers, ipmi: deps.ipmi, shutdown: deps.shutdown,
      liveness: this.liveness, storageEnabled: config.functions.enable_storage, defaultSelector: config.system.migration.target_selector,
      settings: {
        intervalMs, fenceIntervals: f.intervals.fence_intervals, suicideIntervals: f.intervals.suicide_intervals,
        successfulFence: f.actions.successful_fence, failedFence: f.actions.failed_fence, ipmiPort: f.ipmi.port, peerCheck,
      },
    });
    this.monitor = new FenceMonitor({
      self: config.node, zk, clock, logger, events: this.emit, liveness: this.liveness, fencer, intervalMs,
      fenceIntervals: f.intervals.fence_intervals, checkEveryMs: deps.fenceCheckEveryMs,
    });
    this.retry = new RecoveryRetry({
      self: config.node, zk, clock, logger: logger.child({ component: 'recovery-retry' }), events: this.emit, peers,
      storageEnabled: config.functions.enable_storage, defaultSelector: config.system.migration.target_selector,
      liveness: this.liveness, isPrimary: () => this.election?.routerState === 'primary', intervalMs,
      rules: { failedFence: f.actions.failed_fence, resetWaitMs: resetWaitMs(intervalMs, f.intervals.suicide_intervals, { peerCheck }) },
    });
    this.election = new PrimaryElection({
      self: config.node, coordinators: config.cluster.coordinators, zk, clock, logger: logger.child({ component: 'primary' }),
      events: this.emit, peers, mayContend: () => this.keepalive.currentDaemonState === 'run',
      silentForMs: (n) => this.liveness?.silentForMs(n), deadPrimaryGraceMs: (deps.zkSessionTimeoutMs ?? 10_000) + intervalMs,
      lease: { ownSilentForMs: () => this.keepalive.silentForMs(), ms: primaryLeaseMs(deps.zkSessionTimeoutMs ?? 10_000, intervalMs) },
      reassertEveryMs: intervalMs,
      primaryKeys: () => primaryConfigKeys(config),
    });
    this.faults = new FaultReporter({
      zk, clock, logger: logger.child({ component: 'faults' }), intervalMs, isPrimary: () => this.election?.routerState === 'primary',
    });
  }

  /** What the KeepalivedService reports. */
  state(): KeepaliveState {
    return {
      daemonState: this.keepalive.currentDaemonState ?? '',
      routerState: this.election?.routerState ?? 'client',
      lastKeepaliveMs: this.keepalive.lastKeepaliveMs,
      missedKeepalives: this.keepalive.missed,
      health: this.deps.health?.summary().health ?? -1,
    };
  }

  /** Runs until `signal` aborts, then steps down from the primary role and stops the plugins. */
  async run(signal: AbortSignal): Promise<void> {
    this.liveness?.start();
    const first = new Promise<void>((resolve) => {
      const off = this.keepalive.onResult((ok) => ok && (off(), resolve()));
    });
    let healthStarted = false;
    const health = first.then(async () => {
      if (signal.aborted || !this.deps.health) return;
      await this.deps.health.start();
      healthStarted = true;
    });
    const loops = [this.keepalive.run(signal), this.suicide.run(signal), this.witness?.run(signal), this.monitor?.run(signal), this.retry?.run(signal), this.election?.run(signal), this.faults?.run(signal)];
    try {
      await Promise.all(loops);
    } finally {
      await this.election?.stepDown().catch((err: unknown) => this.deps.logger.error({ err: describeError(err) }, 'step-down failed'));
      this.liveness?.stop();
      if (healthStarted) await this.deps.health?.stop().catch(() => undefined);
      void health.catch((err: unknown) => this.deps.logger.error({ err: describeError(err) }, 'health plugins did not start'));
    }
  }

  private healthLogFields(): Record<string, unknown> {
    const s = this.deps.health?.summary();
    if (!s) return {};
    const details = this.deps.config.system.configuration.logging.log_keepalive_plugin_details;
    return {
      health: s.health,
      ...(details ? { plugins: s.plugins.map((p) => pluginDetailLine(p)) } : {}),
    };
  }
}
