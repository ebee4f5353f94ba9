import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '@pvc/runtime';
import { FakeZkServer } from './fake-server.js';
import { FakeZkStats } from './fake-stats.js';

/** The fake server's counters: requests by kind, and one notification per session and change. */
describe('FakeZkServer stats', () => {
  it('counts requests by kind', async () => {
    const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
    const a = await server.connect();
    const before = server.stats.snapshot();
    await a.create('/x', '1');
    await a.set('/x', '2');
    await a.read('/x');
    await a.exists('/x');
    await a.children('/');
    await a.multi([{ type: 'set', path: '/x', data: '3' }, { type: 'create', path: '/y' }]);
    await a.delete('/y');
    const d = FakeZkStats.diff(before, server.stats.snapshot());
    // The client's delete is recursive: it lists the children, then deletes in one multi.
    assert.deepEqual(d.ops, { getData: 1, exists: 1, getChildren: 2, create: 1, set: 1, delete: 0, multi: 2 });
    assert.equal(d.totalOps, 8);
    assert.equal(d.notifications, 0);
  });

  it('counts a notification per watching session and change, not per change alone', async () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const server = new FakeZkServer({ clock });
    const [a, b, c] = await Promise.all([server.connect(), server.connect(), server.connect()]);
    await a.create('/k', '0');
    const seen: string[] = [];
    b.watchData('/k', (v) => void seen.push(`b:${v?.data ?? ''}`));
    c.watchData('/k', (v) => void seen.push(`c:${v?.data ?? ''}`));
    await clock.advance(10);
    const before = server.stats.snapshot();
    await a.set('/k', '1');
    await clock.advance(10);
    const d = FakeZkStats.diff(before, server.stats.snapshot());
    assert.equal(d.notifications, 2, 'two watching sessions, one change');
    assert.ok(seen.includes('b:1') && seen.includes('c:1'));
    assert.ok(d.ops.getData >= 2, 'each watch re-arms with a read');
  });

  it('a reconnection that keeps the session reads again only what changed meanwhile, not every watched key', async () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const server = new FakeZkServer({ clock });
    const [a, b] = await Promise.all([server.connect(), server.connect()]);
    const keys = Array.from({ length: 50 }, (_, i) => `/k${i}`);
    for (const k of keys) await a.create(k, '0');
    const seen = new Map<string, string>();
    for (const k of keys) b.watchData(k, (v) => void seen.set(k, v?.data ?? ''));
    await clock.advance(10);
    assert.equal(seen.size, 50);
    const back = new Promise<void>((resolve) => b.on('connected', () => resolve()));
    await a.set('/k7', 'changing');
    await clock.advance(10);
    const before = server.stats.snapshot();
    b.dropConnection();
    await a.set('/k7', 'changed');
    await clock.advance(2_000);
    await back;
    await clock.advance(2_000);
    const d = FakeZkStats.diff(before, server.stats.snapshot());
    assert.equal(seen.get('/k7'), 'changed');
    assert.ok(d.ops.getData <= 2, `only the changed key is read again (got ${d.ops.getData} reads for 50 watches)`);
  });
});
