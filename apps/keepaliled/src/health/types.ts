/**
 * The node health plugin interface: what a plugin file in `plugin_directory` exports and what it
 * receives. Documented for users in `docs/health-plugins.md`. Plugin files import nothing from this
 * repository at run time (only these types, which compile away), so a built plugin is one
 * self-contained `.js` file that can be copied anywhere.
 *
 * @module
 */
import type { Config } from '@pvc/config';

/** What one `run()` reports. */
export interface PluginResult {
  /** Health points this plugin takes off the node's 100: an integer ≥ 0 (others are clamped). */
  delta: number;
  /** One line for operators. */
  message: string;
  /** Details, stored as JSON in `monitoring_data/<name>/data`. Default `{}`. */
  data?: Record<string, unknown>;
}

/** A command's outcome. A non-zero exit is a result, not an exception. */
export interface PluginExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Minimal structured logger handed to plugins (a pino child logger in keepaliled). */
export interface PluginLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** This node's own BMC (from `system.fencing.ipmi`); the password stays inside keepaliled. */
export interface PluginBmc {
  /** `host:port`, for messages. */
  readonly name: string;
  /** Chassis power state; rejects with a message naming the BMC (never the password). */
  powerStatus(opts?: { timeoutMs?: number }): Promise<'on' | 'off'>;
}

/** A local service keepaliled gathers figures from (vmd, netd), as its keepalives last saw it. */
export interface PluginServiceState {
  readonly name: string;
  /** No figures for 2 keepalives in a row (`docs/keepaliled.md`, Keepalives); one slow answer is not down. */
  readonly down: boolean;
  /** Ms since its last answer; 0 when it answered the last keepalive. */
  readonly silentForMs: number;
}

/**
 * Everything a plugin may use. Every call is bound to the current run's {@link signal}: when the run
 * times out or keepaliled stops, running commands are killed and pending calls reject.
 */
export interface PluginContext {
  /** This node's short hostname. */
  readonly node: string;
  /** Whether this node is a coordinator. */
  readonly isCoordinator: boolean;
  /** The node's configuration with every password replaced by `[redacted]`. */
  readonly config: Config;
  /** Runs a command (no shell). Throws when it cannot start (missing binary) or times out. */
  exec(command: string, args: readonly string[], opts?: { timeoutMs?: number }): Promise<PluginExecResult>;
  /** Reads a text file (e.g. `/proc/loadavg`). */
  readFile(path: string): Promise<string>;
  /**
   * Sends `request` over TCP to `host:port` and resolves with everything received until the peer
   * closes (e.g. a ZooKeeper four-letter word). Rejects on connect failure or timeout.
   */
  tcpRequest(host: string, port: number, request: string, opts?: { timeoutMs?: number }): Promise<string>;
  /** This node's BMC, when `system.fencing.ipmi.host` is set. */
  readonly bmc: PluginBmc | undefined;
  readonly logger: PluginLogger;
  /** The local services keepaliled's keepalives gather from, from its own bookkeeping (no probe); empty when unknown. */
  services(): readonly PluginServiceState[];
  /** Milliseconds since the epoch, from keepaliled's clock (virtual in tests): use it for caches. */
  now(): number;
  /** Aborted when this call's time is up or keepaliled is stopping. */
  readonly signal: AbortSignal;
}

/** The default export of a plugin file. */
export interface HealthPlugin {
  /** Unique name: `[a-z0-9_-]+`, used as the ZK key `monitoring_data/<name>`. */
  readonly name: string;
  /** Once at start. A returned string means "not loaded" and says why. */
  setup?(ctx: PluginContext): Promise<string | void | undefined> | string | void | undefined;
  /** Every monitoring interval. */
  run(ctx: PluginContext): Promise<PluginResult> | PluginResult;
  /** Once at stop. */
  cleanup?(ctx: PluginContext): Promise<void> | void;
}

/** What the monitor reports for one plugin. */
export interface PluginSummary {
  name: string;
  delta: number;
  message: string;
  /** Seconds the last run took (a timed-out run: the timeout). */
  runtimeS: number;
}

/** The node's health as of the last run. */
export interface HealthSummary {
  /** 0–100; null before the first run and after stop. */
  health: number | null;
  plugins: PluginSummary[];
}
