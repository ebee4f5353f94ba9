/**
 * How the suicide peer check reads Zookeeper's `srvr` four-letter word (pure). The zkpr health
 * plugin sends the same word; this module judges one thing only: can this server be part of a
 * quorum right now. When in doubt the answer is `unknown`, which never confirms an outage (a node
 * that cannot confirm resets, as without the check).
 *
 * @module
 */
import { parseSrvr } from '../health/plugins/zkpr.js';
import type { ZkServerState } from '../ports.js';

/** `srvr` modes of a server that is in a quorum (or alone, standalone) and serving clients. */
const SERVING_MODES = new Set(['leader', 'follower', 'observer', 'standalone']);

/** A server's state from its `srvr` reply. */
export function classifySrvr(reply: string): { state: ZkServerState; detail: string } {
  if (/not currently serving requests/i.test(reply)) return { state: 'not-serving', detail: 'not currently serving requests' };
  if (/not in the whitelist/i.test(reply)) return { state: 'unknown', detail: 'srvr is not whitelisted' };
  const mode = parseSrvr(reply).mode;
  if (mode === undefined) return { state: 'unknown', detail: reply.trim() === '' ? 'empty srvr reply' : `unexpected srvr reply ${JSON.stringify(reply.trim().slice(0, 60))}` };
  // A read-only server is one cut off from its quorum that still serves reads (no writes, no fence).
  if (mode === 'read-only') return { state: 'not-serving', detail: 'mode read-only (no quorum)' };
  if (SERVING_MODES.has(mode)) return { state: 'serving', detail: `mode ${mode}` };
  return { state: 'unknown', detail: `mode ${mode}` };
}

/** Whether `err` (or a cause of it) is a refused TCP connection. */
function refused(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED') return true;
  }
  return false;
}

/**
 * A server's state when `srvr` could not be asked. Refused: nothing listens on the client port,
 * so no server runs there (it cannot be in a quorum). Anything else (timeout, reset, unreachable)
 * proves nothing: `unknown`.
 */
export function classifyProbeError(err: unknown): { state: ZkServerState; detail: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (refused(err)) return { state: 'not-serving', detail: 'connection refused (no server listening)' };
  return { state: 'unknown', detail: message };
}
