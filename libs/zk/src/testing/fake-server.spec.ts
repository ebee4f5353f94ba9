import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '@pvc/runtime';
import { isZkError } from '../errors.js';
import { Lock } from '../lock.js';
import type { DataSnapshot } from '../types.js';
import { FakeZkServer } from './fake-server.js';
import { ValueRecorder } from './recorder.js';

/** Fake-only behaviour, in virtual time: knobs, partitions, timeouts. */
describe('FakeZkServer in virtual time', () => {
  const setup = async () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const server = new FakeZkServer({ clock });
    const a = await server.connect({ sessionTimeoutMs: 10_000 });
    const b = await server.connect({ sessionTimeoutMs: 10_000 });
    return { clock, server, a, b };
  };

  it('a partition: suspended, then expired after the session timeout, then a new session', async () => {
    const { clock, server, a, b } = await setup();
    const events: string[] = [];
    a.on('suspended', () => events.push(`suspended@${clock.now() % 100_000}`));
    a.on('expired', (e) => events.push(`expired@${clock.now() % 100_000}:${e.reason.split(' ')[0]}`));
    a.on('connected', (e) => events.push(`connected@${clock.now() % 100_000}:${e.newSession}`));
    await a.create('/eph', 'x', { ephemeral: true });
    server.disconnect(a);
    assert.equal(a.state, 'suspended');
    await clock.advance(9_999);
    assert.equal(a.state, 'suspended', 'still within the session timeout');
    assert.equal((await b.exists('/eph'))?.ephemeralOwner, server.sessionIds()[0]);
    await clock.advance(1);
    assert.equal(a.state, 'connected', 'local expiry, then a new session at once');
    assert.equal(await b.exists('/eph'), undefined, 'the server expired the old session too');
    assert.deepEqual(events, ['suspended@0', 'expired@10000:no', 'connected@10000:true']);
  });

  it('partition(): a client cut off stays cut off across a new session, until heal()', async () => {
    const { clock, server, a, b } = await setup();
    server.partition(a);
    assert.equal(a.state, 'suspended');
    await clock.advance(10_000);
    assert.notEqual(a.state, 'connected', 'the new session after the local expiry must not connect while partitioned');
    const write = assert.rejects(a.set('/x', '1', { timeoutMs: 500 }));
    await clock.advance(5_000);
    await write;
    assert.notEqual(a.state, 'connected');
    server.heal(a);
    await clock.advance(0);
    assert.equal(a.state, 'connected');
    await a.create('/after-heal', 'y');
    assert.equal(await b.read('/after-heal'), 'y');
  });

  it('a short partition keeps the session; the watch gets the value written meanwhile', async () => {
    const { clock, server, a, b } = await setup();
    await b.create('/k', '1');
    const rec = new ValueRecorder<DataSnapshot | undefined>(clock);
    a.watchData('/k', rec.fn);
    await clock.advance(1);
    assert.equal(rec.latest()?.data, '1');
    const id = a.sessionId;
    server.disconnect(a);
    await b.set('/k', '2');
    await b.set('/k', '3');
    await clock.advance(5_000);
    assert.equal(rec.latest()?.data, '1', 'nothing arrives while disconnected');
    server.reconnect(a);
    await clock.advance(1);
    assert.equal(a.sessionId, id);
    assert.equal(rec.latest()?.data, '3', 'the latest value, not an intermediate one');
  });

  it('calls made while disconnected time out with OPERATION_TIMEOUT', async () => {
    const { clock, server, a } = await setup();
    server.disconnect(a);
    const p = a.get('/', { timeoutMs: 2_000 }).catch((e: unknown) => e);
    await clock.advance(2_000);
    const err = await p;
    assert.ok(isZkError(err, 'OPERATION_TIMEOUT'), String(err));
    assert.equal(err.retryable, true);
  });

  it('failNextWrite: refused writes apply nothing; "applied" loses only the answer', async () => {
    const { server, a } = await setup();
    server.failNextWrite({ code: 'CONNECTION_LOSS' });
    await assert.rejects(a.write([['/w', 'x']]), (e: unknown) => isZkError(e, 'CONNECTION_LOSS'));
    assert.equal(await a.read('/w'), undefined);
    server.failNextWrite({ applied: true });
    await assert.rejects(a.create('/w', 'y'), (e: unknown) => isZkError(e, 'CONNECTION_LOSS'));
    assert.equal(await a.read('/w'), 'y');
    await a.set('/w', 'z');
    assert.equal(await a.read('/w'), 'z', 'only the next write fails');
  });

  it('write conflicts can be retried with conflictRetries', async () => {
    const { server, a } = await setup();
    await a.create('/c', '0');
    server.failNextWrite({ code: 'BAD_VERSION' });
    await a.write([['/c', '1']], { conflictRetries: 1 });
    assert.equal(await a.read('/c'), '1');
    server.failNextWrite({ code: 'BAD_VERSION' });
    await assert.rejects(a.write([['/c', '2']]), (e: unknown) => isZkError(e, 'BAD_VERSION'));
  });

  it('a server stop keeps sessions (no expiry while down); clients resume on start', async () => {
    const { clock, server, a } = await setup();
    const local = server.client({ sessionTimeoutMs: 10_000, localExpiry: false });
    await local.waitConnected();
    const id = local.sessionId;
    await local.create('/keep', '', { ephemeral: true });
    server.stop();
    assert.equal(local.state, 'suspended');
    await clock.advance(60_000);
    server.start();
    await clock.advance(1);
    assert.equal(local.state, 'connected');
    assert.equal(local.sessionId, id);
    assert.notEqual(await a.exists('/keep'), undefined);
    await local.close();
  });

  it('lock timeouts run in virtual time and remove the contender', async () => {
    const { clock, a, b } = await setup();
    const held = new Lock(a, '/config/fence_lock', { clock });
    assert.equal(await held.acquire(), true);
    const waiting = new Lock(b, '/config/fence_lock', { clock });
    const p = waiting.acquire({ timeoutMs: 4_000 });
    await clock.advance(3_999);
    assert.equal((await a.children('/config/fence_lock')).length, 2);
    await clock.advance(1);
    assert.equal(await p, false);
    assert.equal((await a.children('/config/fence_lock')).length, 1);
  });

  it('an aborted acquire rejects and removes its contender', async () => {
    const { clock, a, b } = await setup();
    assert.equal(await new Lock(a, '/l', { clock }).acquire(), true);
    const ac = new AbortController();
    const p = new Lock(b, '/l', { clock }).acquire({ signal: ac.signal }).catch((e: unknown) => e);
    await clock.advance(100);
    ac.abort();
    const err = await p;
    assert.equal((err as { code?: string }).code, 'ABORTED');
    await clock.advance(1);
    assert.equal((await a.children('/l')).length, 1);
  });

  it('a held lock whose node is deleted by someone else reports lost', async () => {
    const { clock, a, b } = await setup();
    const lock = new Lock(a, '/d', { clock });
    await lock.acquire();
    const reasons: string[] = [];
    lock.onLost((r) => reasons.push(r));
    await clock.advance(1);
    await b.delete(`/d/${lock.node ?? ''}`);
    await clock.advance(1);
    assert.deepEqual(reasons, ['lock node deleted']);
    assert.equal(lock.held, false);
  });
});
