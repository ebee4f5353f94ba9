import zookeeper from 'node-zookeeper-client';
import type { Clock } from '@pvc/runtime';
import { withDeadline } from '../core/deadline.js';
import { ZkError } from '../errors.js';
import type { RealZkClient } from '../real/connect.js';
import type { SessionCredentials } from '../real/node-session.js';

/** One round of the trick: a twin connection with the victim's id/password, closed at once. */
async function twinClose(connectionString: string, creds: SessionCredentials, clock: Clock): Promise<void> {
  const twin = zookeeper.createClient(connectionString, {
    sessionTimeout: 10_000,
    spinDelay: 100,
    retries: 0,
    sessionId: creds.id,
    sessionPassword: creds.password,
  } as Parameters<typeof zookeeper.createClient>[1]);
  try {
    const attached = await withDeadline('session expiry twin', clock, () => new Promise<boolean>((resolve) => {
      twin.once('connected', () => resolve(true));
      twin.once('expired', () => resolve(false)); // already gone
      twin.connect();
    }), { timeoutMs: 3000 });
    if (!attached) return;
    await withDeadline('session expiry twin close', clock, () => new Promise<void>((resolve) => {
      twin.once('disconnected', () => resolve());
      twin.close();
    }), { timeoutMs: 3000 });
  } finally {
    twin.close();
  }
}

/**
 * Forces the server to expire `client`'s current session with the classic trick: a second
 * connection presenting the same session id and password, closed at once, so the server ends the
 * session. The victim's own reconnection can steal the session back before the twin's close
 * lands, so the round is repeated until the victim reports `expired` (deadline `timeoutMs`).
 */
export async function expireRealSession(client: RealZkClient, clock: Clock, timeoutMs = 15_000): Promise<void> {
  let expired = false;
  const off = client.on('expired', () => (expired = true));
  const deadline = clock.now() + timeoutMs;
  try {
    while (!expired) {
      if (clock.now() > deadline) throw new ZkError('OPERATION_TIMEOUT', `could not expire session ${client.sessionId ?? '?'}`);
      const creds = client.sessionCredentials();
      if (creds === undefined) throw new ZkError('SESSION_EXPIRED', 'the client has no live session to expire');
      await twinClose(client.connectionString, creds, clock).catch(() => undefined);
      for (let i = 0; i < 20 && !expired; i++) await clock.sleep(50);
    }
  } finally {
    off();
  }
}
