/**
 * The state vocabularies keepaliled reads and writes (pvc-inventory §2.3), and the typed events it
 * reports. Values read from ZK are text that may hold anything; parsers return `undefined` for an
 * unknown value so callers can log the key and skip.
 *
 * @module
 */

/** `/nodes/<n>/daemonstate`. */
export type DaemonState = 'init' | 'run' | 'shutdown' | 'stop' | 'dead' | 'fenced';
/** `/nodes/<n>/routerstate`. */
export type RouterState = 'client' | 'secondary' | 'takeover' | 'primary' | 'relinquish';
/** `/nodes/<n>/domainstate`. */
export type DomainState = 'ready' | 'flush' | 'flushed' | 'unflush' | 'fence-flush';

const DAEMON_STATES: readonly string[] = ['init', 'run', 'shutdown', 'stop', 'dead', 'fenced'];
const ROUTER_STATES: readonly string[] = ['client', 'secondary', 'takeover', 'primary', 'relinquish'];
const DOMAIN_STATES: readonly string[] = ['ready', 'flush', 'flushed', 'unflush', 'fence-flush'];

/** Parses a daemon state; undefined when ZK holds something else. */
export function parseDaemonState(raw: string | undefined): DaemonState | undefined {
  return raw !== undefined && DAEMON_STATES.includes(raw) ? (raw as DaemonState) : undefined;
}

/** Parses a router state; undefined when ZK holds something else. */
export function parseRouterState(raw: string | undefined): RouterState | undefined {
  return raw !== undefined && ROUTER_STATES.includes(raw) ? (raw as RouterState) : undefined;
}

/** Parses a node domain state; undefined when ZK holds something else. */
export function parseDomainState(raw: string | undefined): DomainState | undefined {
  return raw !== undefined && DOMAIN_STATES.includes(raw) ? (raw as DomainState) : undefined;
}

/**
 * What keepaliled reports as it works, in order. The simulator turns these into its deterministic
 * event log; the real service logs them. `at` is set by the reporter (clock ms).
 */
export type KeepalivedEvent =
  | { kind: 'daemon-state'; node: string; from: string; to: DaemonState; reason: string }
  | { kind: 'keepalive-failed'; node: string; missed: number; error: string }
  | { kind: 'node-dead'; node: string; fencer: string; silentMs: number }
  | { kind: 'node-alive'; node: string; fencer: string; reason: string }
  | { kind: 'fence-start'; node: string; fencer: string; resumed: boolean }
  | { kind: 'fence-result'; node: string; fencer: string; outcome: 'success' | 'failed'; reason: string }
  | { kind: 'fence-skipped'; node: string; fencer: string; reason: string }
  | { kind: 'vm-recovered'; node: string; vm: string; target: string; fencer: string }
  | { kind: 'vm-stopped'; node: string; vm: string; reason: string; fencer: string }
  | { kind: 'vm-left'; node: string; vm: string; reason: string; fencer: string }
  | { kind: 'recovery-done'; node: string; fencer: string; recovered: number; left: number }
  | { kind: 'router-state'; node: string; from: string; to: RouterState; reason: string }
  | { kind: 'primary-claimed'; node: string; previous: string }
  | { kind: 'primary-duties'; node: string; on: boolean; reason: string }
  | { kind: 'suicide'; node: string; silentMs: number; stopped: number };

/** Receives every {@link KeepalivedEvent}. */
export type EventSink = (event: KeepalivedEvent) => void;
