// A ZooKeeper server that goes silent mid-session (a host powered off: no RST) is left within the
// read timeout (min(2/3 session, 2 s)), not after 2/3 of the session timeout; a healthy idle
// server is never left (the probe keeps data flowing). Two TCP proxies in front of one real server:
// the one holding the client's connection is frozen (it stops forwarding but keeps the socket).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { realClock } from '@pvc/runtime';
import { connectZk, READ_TIMEOUT_CAP_MS, type RealZkClient } from '@pvc/zk';
import { ZkTestServer } from '../../support/zk-server.js';
import { freePort } from '../../support/ports.js';
import { waitUntil } from '../../support/wait.js';

/** A TCP proxy to `target` that can be frozen: bytes are then swallowed in both directions. */
class FreezableProxy {
  frozen = false;
  readonly clients: Socket[] = [];
  private server: Server | undefined;
  port = 0;

  constructor(private readonly target: number) {}

  async start(): Promise<void> {
    this.port = await freePort();
    this.server = createServer((client) => {
      this.clients.push(client);
      const upstream = tcpConnect(this.target, '127.0.0.1');
      client.on('data', (d) => void (this.frozen || upstream.write(d)));
      upstream.on('data', (d) => void (this.frozen || client.write(d)));
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** Whether a client connection through this proxy is open. */
  get holding(): boolean {
    return this.clients.some((c) => !c.destroyed);
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('real ZooKeeper: a server that goes silent', () => {
  let server: ZkTestServer;
  let a: FreezableProxy;
  let b: FreezableProxy;
  let client: RealZkClient | undefined;
  before(async () => {
    // As deployed (deploy/zookeeper/zoo.cfg grants keepaliled 10 s): the library then pings every 3.3 s.
    server = await ZkTestServer.start({ tickTimeMs: 500, maxSessionTimeoutMs: 10_000 });
    a = new FreezableProxy(server.port);
    b = new FreezableProxy(server.port);
    await a.start();
    await b.start();
  });
  after(async () => {
    await client?.close();
    await a?.stop();
    await b?.stop();
    await server?.stop();
  });

  it('idle for 8 s on a healthy server (session 10 s): never dropped; frozen: left within the read timeout, session kept', async () => {
    const events: string[] = [];
    client = await connectZk({ hosts: [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`], sessionTimeoutMs: 10_000, spinDelayMs: 50, clock: realClock });
    client.on('suspended', () => events.push('suspended'));
    client.on('connected', (e) => events.push(e.newSession ? 'connected:new' : 'connected:same'));
    await client.create('/rt', 'x');
    await realClock.sleep(8_000);
    assert.deepEqual([...events], [], 'a healthy idle connection was dropped (the probe did not keep it alive)');
    const held = a.holding ? a : b;
    const t0 = realClock.now();
    held.frozen = true;
    await waitUntil(() => events.includes('connected:same'), { what: 'the client connected again through the other proxy', timeoutMs: 10_000, intervalMs: 20 });
    const ms = realClock.now() - t0;
    console.log(`frozen server left and session resumed elsewhere after ${ms} ms (read timeout ${READ_TIMEOUT_CAP_MS} ms; before: 2/3 of 10 s)`);
    assert.deepEqual(events, ['suspended', 'connected:same']);
    assert.ok(ms < READ_TIMEOUT_CAP_MS + 1_500, `left after ${ms} ms`);
    assert.equal(await client.read('/rt'), 'x');
  });

  it('readTimeoutMs 1000 (vmd): idle for 5 s never dropped; frozen: suspended within ~1 s (default: 2 s), session kept', async () => {
    const c = new FreezableProxy(server.port);
    const d = new FreezableProxy(server.port);
    await c.start();
    await d.start();
    const fast = await connectZk({ hosts: [`127.0.0.1:${c.port}`, `127.0.0.1:${d.port}`], sessionTimeoutMs: 10_000, spinDelayMs: 50, readTimeoutMs: 1_000, clock: realClock });
    try {
      const events: { what: string; at: number }[] = [];
      fast.on('suspended', () => events.push({ what: 'suspended', at: realClock.now() }));
      fast.on('connected', (e) => events.push({ what: e.newSession ? 'connected:new' : 'connected:same', at: realClock.now() }));
      await realClock.sleep(5_000);
      assert.equal(events.length, 0, 'a healthy idle connection was dropped');
      const held = c.holding ? c : d;
      const t0 = realClock.now();
      held.frozen = true;
      await waitUntil(() => events.some((e) => e.what === 'connected:same'), { what: 'the client connected again through the other proxy', timeoutMs: 10_000, intervalMs: 20 });
      const suspendedAfter = events[0]!.at - t0;
      console.log(`readTimeoutMs 1000: frozen server left after ${suspendedAfter} ms, session resumed after ${events[1]!.at - t0} ms`);
      assert.deepEqual(events.map((e) => e.what), ['suspended', 'connected:same']);
      // The default read timeout would take at least 2000 ms; allow timer lateness under load.
      assert.ok(suspendedAfter < 1_800, `left after ${suspendedAfter} ms`);
      assert.equal(await fast.read('/rt'), 'x');
    } finally {
      await fast.close();
      await c.stop();
      await d.stop();
    }
  });
});
