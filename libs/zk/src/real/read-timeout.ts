import type { Socket } from 'node:net';
import type { Client } from 'node-zookeeper-client';
import type { Clock } from '@pvc/runtime';

/** The part of the library's (unexported) connection manager used here: its current socket. */
interface ConnectionManagerInternals {
  socket?: Socket;
}

/** Destroys the client's current socket: the library reconnects to the next server, keeping the session. */
export function dropSocket(client: Client): void {
  (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager?.socket?.destroy();
}

/**
 * node-zookeeper-client pings an idle server every third of the session timeout but never gives up
 * waiting for the answer (its read timeout is commented out). A server that goes silent without
 * closing the connection (pulled cable, host powered off) leaves the client "connected" until TCP
 * gives up, ~15 minutes: no watch fires, no call returns. Like the Java client, drop the connection
 * when nothing was read for two thirds of the session timeout; the library then moves on to the next
 * server (DISCONNECTED → suspended; the session survives if another server is reached in time).
 *
 * The same holds for the handshake: once TCP is up the library clears its connect timer and waits
 * for the ConnectResponse without bound, so a server that accepts the connection but does not
 * answer (a JVM still starting, a wedged server) held a reconnecting client indefinitely. The Java
 * client bounds the handshake too; here the same read timeout applies to any open socket.
 * Returns the function that stops the check.
 */
export function watchReadTimeout(client: Client, clock: Clock, isAlive: () => boolean): () => void {
  const ac = new AbortController();
  let socket: Socket | undefined;
  let lastRead = clock.now();
  const check = (): void => {
    const current = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager?.socket;
    if (current !== socket) {
      socket = current;
      lastRead = clock.now();
      socket?.on('data', () => (lastRead = clock.now()));
      return;
    }
    if (socket && isAlive() && clock.now() - lastRead > (client.getSessionTimeout() * 2) / 3) socket.destroy();
  };
  const loop = async (): Promise<void> => {
    while (!ac.signal.aborted) {
      await clock.sleep(Math.max(100, Math.floor(client.getSessionTimeout() / 10)), ac.signal);
      check();
    }
  };
  loop().catch(() => undefined);
  return () => ac.abort();
}
