import type { Socket } from 'node:net';
import zookeeper, { type Client } from 'node-zookeeper-client';
import type { Clock } from '@pvc/runtime';

/** The part of the library's (unexported) connection manager used here: its current socket. */
interface ConnectionManagerInternals {
  socket?: Socket;
}

/**
 * Destroys a socket of the library's so that it moves on to the next server. Always with an error:
 * the library clears its connect timer only in its socket `error` handler, and that timer, left
 * running, destroys whatever socket is current when it fires (sessionTimeout / servers later) — a
 * connect we had given up on cost every client a second reconnection ~2 s after the first, after
 * a ZK leader died (and keepaliled's liveness window restarted with it).
 */
function destroy(socket: Socket, why: string): void {
  socket.destroy(new Error(why));
}

/** Destroys the client's current socket: the library reconnects to the next server, keeping the session. */
export function dropSocket(client: Client): void {
  const socket = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager?.socket;
  if (socket) destroy(socket, 'dropped: the server did not answer in time');
}

/**
 * A server that has been silent this long is left (unless two thirds of the session timeout is
 * shorter): the library pings only every third of the session timeout (3.3 s at 10 s), so without
 * our own probe a client on a server that died silently went blind for 6.7 s — a vmd whose session
 * sat on a failed host's server saw its recovered VMs' `state=start` 4–5 s late (failover bench).
 * A drop costs little: the session and its watches move to another server.
 */
export const READ_TIMEOUT_CAP_MS = 2_000;

/**
 * A TCP connect to a server that has not completed in this long is given up. The library allows
 * sessionTimeout / servers (3.3 s with 10 s and 3 coordinators): after a dead leader, a client
 * whose server had left the quorum tried the dead host next and waited that long while the
 * others were serving again (~2.3 s on the test cluster, part of the time to fence). A connect on
 * a LAN takes milliseconds; a host that does not answer in 1 s is not one to wait for.
 */
export const CONNECT_TIMEOUT_MS = 1_000;

/**
 * Whether a check woke so late that this process's event loop was blocked meanwhile (a burst of
 * start-up reads, a long GC): Node runs due timers before it reads the sockets, so the answers
 * that arrived during the block have not been read yet and the server only looks silent. Such a
 * check is deferred by one step (after which the sockets have been read); never two in a row, so
 * a loop that is late every time still drops a server that is really silent.
 */
function lateAfterBlock(sleptMs: number, stepMs: number): boolean {
  return sleptMs > 2 * stepMs;
}

/** Options of {@link watchReadTimeout}. */
export interface ReadTimeoutOptions {
  /** Silence after which the connection is dropped (default: min(2/3 session, {@link READ_TIMEOUT_CAP_MS})). */
  deadAfterMs?: number;
  /** A TCP connect not done after this long is given up (default min({@link CONNECT_TIMEOUT_MS}, deadAfterMs)). */
  connectTimeoutMs?: number;
}

/**
 * node-zookeeper-client pings an idle server every third of the session timeout but never gives up
 * waiting for the answer (its read timeout is commented out). A server that goes silent without
 * closing the connection (pulled cable, host powered off) leaves the client "connected" until TCP
 * gives up, ~15 minutes: no watch fires, no call returns. Like the Java client, drop the connection
 * when nothing was read for a while (`deadAfterMs`); the library then moves on to the next server
 * (DISCONNECTED → suspended; the session survives if another server is reached in time). So that a
 * healthy idle server is never silent that long, an `exists` is sent as a probe once nothing was
 * read for a third of it (the library's own pings come too rarely for a short bound).
 *
 * The same holds for the handshake: once TCP is up the library clears its connect timer and waits
 * for the ConnectResponse without bound, so a server that accepts the connection but does not
 * answer (a JVM still starting, a wedged server) held a reconnecting client indefinitely. The Java
 * client bounds the handshake too; here the same read timeout applies to any open socket.
 * Returns the function that stops the check.
 */
export function watchReadTimeout(client: Client, clock: Clock, isAlive: () => boolean, opts: ReadTimeoutOptions = {}): () => void {
  const ac = new AbortController();
  let socket: Socket | undefined;
  let lastRead = clock.now();
  let probedAt = 0;
  const deadAfter = (): number => opts.deadAfterMs ?? Math.min((client.getSessionTimeout() * 2) / 3, READ_TIMEOUT_CAP_MS);
  const check = (): void => {
    const current = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager?.socket;
    if (current !== socket) {
      socket = current;
      lastRead = clock.now();
      socket?.on('data', () => (lastRead = clock.now()));
      return;
    }
    if (!socket || !isAlive()) return;
    const silent = clock.now() - lastRead;
    if (socket.connecting && silent > Math.min(opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, deadAfter())) {
      destroy(socket, `connect not done in ${silent} ms`);
      return;
    }
    if (silent > deadAfter()) {
      destroy(socket, `nothing read for ${silent} ms`);
      return;
    }
    // Only once the handshake is done (a request before it would be queued, not sent), and not
    // while a probe is unanswered: anything read since the probe was sent counts as its answer.
    // `<=`: an answer read in the same millisecond as the probe went out is an answer too (with
    // `<` the check sent no probe after it, and the connection was dropped a read timeout later:
    // every few seconds per session on loopback, bench/zk-ensemble-scale).
    if (silent > deadAfter() / 3 && probedAt <= lastRead && client.getState() === zookeeper.State.SYNC_CONNECTED) {
      probedAt = clock.now();
      client.exists('/zookeeper', () => undefined);
    }
  };
  const loop = async (): Promise<void> => {
    let deferred = false;
    while (!ac.signal.aborted) {
      const stepMs = Math.max(50, Math.floor(Math.min(deadAfter(), opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS) / 8));
      const from = clock.now();
      await clock.sleep(stepMs, ac.signal);
      if (!deferred && lateAfterBlock(clock.now() - from, stepMs)) {
        deferred = true;
        continue;
      }
      deferred = false;
      check();
    }
  };
  loop().catch(() => undefined);
  return () => ac.abort();
}
