// Session behaviour against a real ZooKeeper server that we stop, restart and kill.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { realClock } from '@pvc/runtime';
import { connectZk, Lock, type DataSnapshot, type RealZkClient, type ZkClient } from '@pvc/zk';
import { ValueRecorder } from '@pvc/zk/testing';
import { createServer, type Socket } from 'node:net';
import { ZkTestServer } from '../../support/zk-server.js';
import { freePort } from '../../support/ports.js';

describe('real ZooKeeper: restarts and session expiry', () => {
  let server: ZkTestServer;
  const clients: ZkClient[] = [];
  const connect = async (sessionTimeoutMs: number): Promise<RealZkClient> => {
    const c = await connectZk({ hosts: ['127.0.0.1'], port: server.port, sessionTimeoutMs, spinDelayMs: 100, clock: realClock });
    clients.push(c);
    return c;
  };
  const events = (c: ZkClient): string[] => {
    const seen: string[] = [];
    c.on('suspended', () => seen.push('suspended'));
    c.on('expired', () => seen.push('expired'));
    c.on('connected', (e) => seen.push(e.newSession ? 'connected:new' : 'connected:same'));
    return seen;
  };
  const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> => {
    const end = realClock.now() + ms;
    while (!(await check())) {
      if (realClock.now() > end) throw new Error(`timed out waiting until ${what}`);
      await realClock.sleep(25);
    }
  };

  before(async () => {
    server = await ZkTestServer.start({ maxSessionTimeoutMs: 20_000 });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.destroy();
  });

  it('a restart within the session timeout keeps the session; watches deliver the latest value', async () => {
    const watcher = await connect(6000);
    const writer = await connect(6000);
    await writer.ensurePath('/restart/value');
    await writer.set('/restart/value', 'before');
    await watcher.create('/restart/eph', '', { ephemeral: true });
    const seen = events(watcher);
    const id = watcher.sessionId;
    const rec = new ValueRecorder<DataSnapshot | undefined>(realClock);
    watcher.watchData('/restart/value', rec.fn);
    await rec.waitFor((v) => v?.data === 'before');

    await server.restart();
    await writer.waitConnected({ timeoutMs: 10_000 });
    await writer.set('/restart/value', 'after restart');
    await rec.waitFor((v) => v?.data === 'after restart', 'the value written after the restart', 10_000);
    await watcher.waitConnected({ timeoutMs: 10_000 });
    assert.equal(watcher.sessionId, id, 'same session');
    assert.deepEqual(seen, ['suspended', 'connected:same']);
    assert.equal((await writer.exists('/restart/eph'))?.ephemeralOwner, id, 'its ephemeral survived');
    await writer.set('/restart/value', 'later');
    await rec.waitFor((v) => v?.data === 'later', 'a later change');
  });

  it('a server down longer than the session timeout: expired, new session, watches re-armed, lock lost', async () => {
    const holder = await connect(2000);
    const observer = await connect(6000);
    assert.ok(holder.sessionId !== undefined);
    await observer.ensurePath('/outage/value');
    await observer.set('/outage/value', 'v1');
    const lock = new Lock(holder, '/outage/lock', { clock: realClock, identifier: 'holder' });
    assert.equal(await lock.acquire({ timeoutMs: 5000 }), true);
    const lost: string[] = [];
    lock.onLost((r) => lost.push(r));
    const rec = new ValueRecorder<DataSnapshot | undefined>(realClock);
    holder.watchData('/outage/value', rec.fn);
    await rec.waitFor((v) => v?.data === 'v1');
    const seen = events(holder);
    const oldId = holder.sessionId;

    await server.stop();
    // Client-side expiry: the server is unreachable, yet after the negotiated timeout the
    // holder must stop trusting its session and its lock.
    await until('the holder declared its session expired', () => seen.includes('expired'), 8000);
    assert.deepEqual(lost, ['session expired']);
    assert.equal(lock.held, false);
    await server.start();
    await holder.waitConnected({ timeoutMs: 10_000 });
    assert.notEqual(holder.sessionId, oldId);
    assert.deepEqual(seen, ['suspended', 'expired', 'connected:new']);
    await observer.waitConnected({ timeoutMs: 10_000 });
    await observer.set('/outage/value', 'v2');
    await rec.waitFor((v) => v?.data === 'v2', 'the watch re-armed on the new session', 10_000);
    // The server drops the old session (and its lock contender) one session timeout after restart.
    await until('the old contender is gone', async () => (await observer.children('/outage/lock')).length === 0, 10_000);
    assert.equal(await new Lock(observer, '/outage/lock', { clock: realClock }).acquire({ timeoutMs: 5000 }), true);
  });

  it('a server that accepts the connection but never answers the handshake does not hold a client', async () => {
    // The library waits for the ConnectResponse without bound once TCP is up; our read timeout
    // (2/3 of the session timeout) now covers the handshake, so each client moves on to the real
    // server. The server list is shuffled per client: with 8 clients, about half try the silent one first.
    const sockets: Socket[] = [];
    const silent = createServer((sock) => void sockets.push(sock));
    const silentPort = await freePort();
    await new Promise<void>((resolve) => silent.listen(silentPort, '127.0.0.1', resolve));
    const opened: RealZkClient[] = [];
    try {
      const t0 = realClock.now();
      await Promise.all(Array.from({ length: 8 }, async () => {
        const c = await connectZk(
          { hosts: [`127.0.0.1:${silentPort}`, `127.0.0.1:${server.port}`], sessionTimeoutMs: 3000, spinDelayMs: 100, clock: realClock },
          { timeoutMs: 8000 },
        );
        opened.push(c);
      }));
      const ms = realClock.now() - t0;
      console.log(`8 clients connected in ${ms} ms; the silent server was tried ${sockets.length}×`);
      assert.ok(sockets.length > 0, 'some client tried the silent server (else the test proves nothing; rerun)');
      for (const c of opened) assert.equal(c.state, 'connected');
    } finally {
      for (const c of opened) await c.close();
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a killed server (SIGKILL) comes back with its data; clients reconnect by themselves', async () => {
    // The session must outlive a JVM restart, which takes several seconds on a loaded 2-core machine.
    const c = await connect(20_000);
    await c.ensurePath('/killed');
    await c.write([['/killed', 'durable']]);
    const seen = events(c);
    await server.kill();
    await until('the client noticed', () => c.state === 'suspended', 5000);
    const t0 = realClock.now();
    await server.start();
    // A JVM start on a loaded 2-core machine can take many seconds; the session (20 s) must outlive it.
    await c.waitConnected({ timeoutMs: 30_000 });
    console.log(`server restart + client reconnect: ${realClock.now() - t0} ms`);
    assert.equal(await c.read('/killed'), 'durable');
    assert.deepEqual(seen, ['suspended', 'connected:same']);
  });
});
