/**
 * What keepaliled reports as it works. The state vocabularies it reads and writes (daemon, router
 * and node-domain states, pvc-inventory §2.3) are schema v15's, shared by every service: they
 * live in `@pvc/zk` (`vocab.ts`), and every value is read through the key table's codecs, so an
 * unknown stored state is logged once with its key and reads as `undefined` (never acted on).
 *
 * @module
 */
import type { DaemonState, RouterState } from '@pvc/zk';

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
  /** `retried`: placed by the recovery retry, after recovery had found no target for it. */
  | { kind: 'vm-recovered'; node: string; vm: string; target: string; fencer: string; retried?: boolean }
  | { kind: 'vm-stopped'; node: string; vm: string; reason: string; fencer: string }
  | { kind: 'vm-left'; node: string; vm: string; reason: string; fencer: string }
  | { kind: 'recovery-done'; node: string; fencer: string; recovered: number; left: number }
  | { kind: 'router-state'; node: string; from: string; to: RouterState; reason: string }
  | { kind: 'primary-claimed'; node: string; previous: string }
  | { kind: 'primary-duties'; node: string; on: boolean; reason: string }
  | { kind: 'suicide'; node: string; silentMs: number; stopped: number }
  /** The suicide watch changed state (`suicide.ts`: watching, held, grace, fired), with why. */
  | { kind: 'suicide-watch'; node: string; from: string; to: string; reason: string };

/** Receives every {@link KeepalivedEvent}. */
export type EventSink = (event: KeepalivedEvent) => void;
