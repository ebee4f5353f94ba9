/**
 * The node health monitor: loads the plugins of `plugin_directory`, runs them every
 * `monitoring_interval`, and keeps `/nodes/<node>/monitoring_*` up to date.
 *
 * Safety contract: nothing a plugin does (throw, hang, return garbage) and no ZK failure can stall
 * the caller (the keepalive) or stop the loop; every run is bounded by `runTimeoutMs`.
 *
 * @module
 */
import type { Config } from '@pvc/config';
import { describeError } from '@pvc/runtime';
import type { Clock, Exec, Logger } from '@pvc/runtime';
import { nodeKeys } from '@pvc/zk';
import type { ZkClient } from '@pvc/zk';
import { callBounded } from './bounded.js';
import { contextBase, pluginContext, realHostPorts } from './context.js';
import type { ContextBase, HostPorts } from './context.js';
import { newSlot, runCycle } from './cycle.js';
import type { PluginSlot } from './cycle.js';
import { DEFAULT_PLUGIN_EXTENSIONS, loadPluginFiles } from './loader.js';
import type { LoadedPlugin } from './loader.js';
import type { HealthSummary, PluginServiceState } from './types.js';
import { initPairs, runPairs, stalePlugins, stopPairs } from './zk-writes.js';

/** Dependencies of {@link createHealthMonitor}. */
export interface HealthMonitorDeps {
  node: string;
  isCoordinator: boolean;
  config: Config;
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  exec: Exec;
  /** Usually `config.system.configuration.directories.plugin_directory`. */
  pluginDirectory: string;
  /** Usually `monitoring_interval` × 1000. */
  intervalMs: number;
  /** Bound of each setup/run/cleanup call. Default: max(1 s, intervalMs − 1 s). */
  runTimeoutMs?: number;
  /** File extensions loaded. Default `.js`, `.mjs`; tests under tsx add `.ts`. */
  pluginExtensions?: readonly string[];
  /** Replaces the real host ports behind `ctx` (tests). */
  hostPorts?: HostPorts;
  /** The keepalive's view of the local services, for `ctx.services()` (the `pvcs` plugin). */
  services?: () => readonly PluginServiceState[];
}

/** The monitor's life cycle. */
export type MonitorState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/** What keepaliled's core drives. */
export interface HealthMonitor {
  /** Loads and sets up the plugins, writes the initial keys, starts the loop (first run at once). */
  start(): Promise<void>;
  /** Stops the loop, runs every cleanup(), writes `monitoring_health = None`. */
  stop(): Promise<void>;
  /** Health and per-plugin results of the last run. */
  summary(): HealthSummary;
  readonly state: MonitorState;
  /** Completed runs so far. */
  readonly runs: number;
}

/** Builds the monitor. Nothing happens until {@link HealthMonitor.start}. */
export function createHealthMonitor(deps: HealthMonitorDeps): HealthMonitor {
  return new Monitor(deps);
}

class Monitor implements HealthMonitor {
  state: MonitorState = 'new';
  runs = 0;
  private slots: PluginSlot[] = [];
  private health: number | null = null;
  private readonly stopCtl = new AbortController();
  private startDone: Promise<void> = Promise.resolve();
  private loopDone: Promise<void> = Promise.resolve();
  private readonly timeoutMs: number;
  private readonly log: Logger;
  private readonly base: ContextBase;

  constructor(private readonly deps: HealthMonitorDeps) {
    this.timeoutMs = deps.runTimeoutMs ?? Math.max(1000, deps.intervalMs - 1000);
    this.log = deps.logger.child({ component: 'health' });
    const ports = deps.hostPorts ?? realHostPorts(deps.exec, deps.config);
    this.base = contextBase({
      node: deps.node, isCoordinator: deps.isCoordinator, config: deps.config, ports, logger: this.log, clock: deps.clock, services: deps.services,
    });
  }

  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new Error(`health monitor cannot start: it is ${this.state}`));
    this.state = 'starting';
    this.startDone = this.doStart();
    return this.startDone;
  }

  private async doStart(): Promise<void> {
    const { plugins, problems } = await loadPluginFiles(this.deps.pluginDirectory, this.deps.pluginExtensions ?? DEFAULT_PLUGIN_EXTENSIONS);
    for (const p of problems) this.log.warn({ file: p.file }, `health plugin ${p.file} not loaded: ${p.reason}`);
    this.slots = (await this.setupAll(plugins)).map(newSlot);
    const names = this.slots.map((s) => s.loaded.name);
    if (names.length === 0) this.log.error({ dir: this.deps.pluginDirectory }, 'no health plugins loaded; node health stays unknown');
    else this.log.info({ plugins: names }, `health plugins: ${names.join(' ')}`);
    await this.writeInit(names);
    if (this.stopCtl.signal.aborted) return;
    this.state = 'running';
    if (names.length > 0) this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    const wasStarted = this.state !== 'new';
    this.state = 'stopping';
    this.stopCtl.abort();
    await this.startDone.catch(() => undefined);
    await this.loopDone;
    if (wasStarted) {
      await this.cleanupAll();
      // Without a session the write could only wait out its deadline (14 s) inside the stop window.
      if (this.deps.zk.state === 'connected') await this.writeSafely('stop', stopPairs(this.deps.node));
      else this.log.warn({ zk: this.deps.zk.state }, 'health stop not written to ZK: no ZK session at shutdown');
    }
    this.health = null;
    this.state = 'stopped';
  }

  summary(): HealthSummary {
    return {
      health: this.health,
      plugins: this.slots.map((s) => ({
        name: s.last.name,
        delta: s.last.result.delta,
        message: s.last.result.message,
        runtimeS: Math.round(s.last.runtimeMs / 10) / 100,
      })),
    };
  }

  private async setupAll(plugins: readonly LoadedPlugin[]): Promise<LoadedPlugin[]> {
    const results = await Promise.all(
      plugins.map(async (lp) => {
        if (lp.plugin.setup === undefined) return lp;
        const setup = lp.plugin.setup.bind(lp.plugin);
        const o = await callBounded((signal) => setup(pluginContext(this.base, lp.name, signal)), this.timeoutMs, this.deps.clock, this.stopCtl.signal);
        const why =
          o.kind === 'ok' ? (typeof o.value === 'string' ? o.value : undefined)
          : o.kind === 'error' ? `setup failed: ${describeError(o.error)}`
          : o.kind === 'timeout' ? `setup timed out after ${this.timeoutMs / 1000} s`
          : 'stopping';
        if (why === undefined) return lp;
        this.log.warn({ plugin: lp.name, file: lp.file }, `health plugin ${lp.name} not loaded: ${why}`);
        return undefined;
      }),
    );
    return results.filter((r): r is LoadedPlugin => r !== undefined);
  }

  private async writeInit(names: readonly string[]): Promise<void> {
    await this.writeSafely('initial', initPairs(this.deps.node, names));
    const dataPath = nodeKeys(this.deps.node).monitoringData.path;
    try {
      for (const stale of stalePlugins(await this.deps.zk.children(dataPath), names)) {
        await this.deps.zk.delete(`${dataPath}/${stale}`, { recursive: true, missingOk: true });
        this.log.info({ plugin: stale }, `removed stale health data of plugin ${stale}`);
      }
    } catch (err) {
      this.log.warn({ err: describeError(err) }, `could not remove stale health plugin data: ${describeError(err)}`);
    }
  }

  private async loop(): Promise<void> {
    const { clock } = this.deps;
    const signal = this.stopCtl.signal;
    while (!signal.aborted) {
      const t0 = clock.now();
      await this.runOnce();
      try {
        await clock.sleep(Math.max(0, this.deps.intervalMs - (clock.now() - t0)), signal);
      } catch {
        return;
      }
    }
  }

  private async runOnce(): Promise<void> {
    try {
      const health = await runCycle(this.slots, {
        base: this.base, clock: this.deps.clock, logger: this.log, timeoutMs: this.timeoutMs, stop: this.stopCtl.signal,
      });
      if (this.stopCtl.signal.aborted) return;
      this.health = health;
      this.runs++;
      this.log.debug({ health, runs: this.runs }, `node health ${health}%`);
      await this.writeSafely('run', runPairs(this.deps.node, this.slots.map((s) => s.last), health));
    } catch (err) {
      this.log.error({ err: describeError(err) }, `health run failed: ${describeError(err)}`);
    }
  }

  private async cleanupAll(): Promise<void> {
    const never = new AbortController().signal;
    await Promise.all(
      this.slots.map(async ({ loaded }) => {
        if (loaded.plugin.cleanup === undefined) return;
        const cleanup = loaded.plugin.cleanup.bind(loaded.plugin);
        const o = await callBounded((signal) => cleanup(pluginContext(this.base, loaded.name, signal)), this.timeoutMs, this.deps.clock, never);
        if (o.kind === 'error') this.log.warn({ plugin: loaded.name }, `health plugin ${loaded.name} cleanup failed: ${describeError(o.error)}`);
        if (o.kind === 'timeout') this.log.warn({ plugin: loaded.name }, `health plugin ${loaded.name} cleanup timed out`);
      }),
    );
  }

  /** A failed write is logged; the loop goes on and the next run writes again. */
  private async writeSafely(what: string, pairs: Parameters<ZkClient['write']>[0]): Promise<void> {
    try {
      await this.deps.zk.write(pairs, { timeoutMs: this.timeoutMs });
    } catch (err) {
      this.log.warn({ err: describeError(err) }, `health ${what} write to ZK failed: ${describeError(err)}`);
    }
  }
}
