import type { Clock, Logger } from '@pvc/runtime';
import type { SocketHolders } from '../host/socket-holders.js';

/** How long a new supervisor waits for a previous generation's children to release their sockets. */
export const SOCKET_RELEASE_BOUND_MS = 10_000;
/** Pause between two looks at the sockets. */
export const SOCKET_RELEASE_POLL_MS = 100;

/** One child's socket. */
export interface ChildSocket {
  readonly child: string;
  readonly path: string;
}

/** Deps of {@link waitForSocketsReleased}. */
export interface ReleaseWaitDeps {
  readonly holders: SocketHolders;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Shutdown: the wait rejects with AbortedError. */
  readonly signal: AbortSignal;
  readonly boundMs?: number;
  readonly pollMs?: number;
}

/** A socket still held, with the pids holding it (empty when they could not be named). */
export interface HeldSocket extends ChildSocket {
  readonly pids: readonly number[];
}

/** What the wait found: `released` false when the bound passed with sockets still held. */
export interface ReleaseOutcome {
  readonly released: boolean;
  readonly waitedMs: number;
  readonly held: readonly HeldSocket[];
}

async function stillHeld(sockets: readonly ChildSocket[], holders: SocketHolders): Promise<HeldSocket[]> {
  const out: HeldSocket[] = [];
  for (const s of sockets) {
    const h = await holders.holders(s.path);
    if (h) out.push({ ...s, pids: h.pids });
  }
  return out;
}

const holderText = (pids: readonly number[]): string => (pids.length === 0 ? 'a process that could not be named' : `pid ${pids.join(', ')}`);

/**
 * Before spawning its children, a standalone supervisor waits (bounded) until no live process
 * holds their sockets: the children of a previous supervisor that died stop by themselves when
 * their IPC channel closes (serviceMain), and a new child started beside one of them would fail
 * with "socket in use" and crash-loop. A stale socket file whose owner is gone does not count
 * (each service removes it when it binds). Waiting until the holder has closed every connection,
 * not only its listener, keeps the old process from removing the new child's socket file on its
 * way out. After the bound, each socket still held is logged at error naming the pid, and the
 * children are started anyway: they fail visibly, with backoff, until it is released.
 */
export async function waitForSocketsReleased(sockets: readonly ChildSocket[], d: ReleaseWaitDeps): Promise<ReleaseOutcome> {
  const bound = d.boundMs ?? SOCKET_RELEASE_BOUND_MS;
  const t0 = d.clock.now();
  let held = await stillHeld(sockets, d.holders);
  if (held.length === 0) return { released: true, waitedMs: 0, held };
  const log = d.logger.child({ component: 'children' });
  log.warn({ held: held.map((h) => ({ child: h.child, socket: h.path, pids: h.pids })), boundMs: bound },
    'sockets of a previous generation are still held: waiting for them to be released before starting the children');
  while (d.clock.now() - t0 < bound) {
    await d.clock.sleep(Math.min(d.pollMs ?? SOCKET_RELEASE_POLL_MS, bound - (d.clock.now() - t0)), d.signal);
    held = await stillHeld(sockets, d.holders);
    if (held.length === 0) {
      const waitedMs = d.clock.now() - t0;
      log.info({ waitedMs }, 'sockets of the previous generation released');
      return { released: true, waitedMs, held };
    }
  }
  for (const h of held) {
    log.error({ child: h.child, socket: h.path, pids: h.pids, afterMs: bound },
      `${h.child}: socket ${h.path} still held by ${holderText(h.pids)} after ${bound} ms: starting ${h.child} anyway (it fails until the socket is released)`);
  }
  return { released: false, waitedMs: d.clock.now() - t0, held };
}
