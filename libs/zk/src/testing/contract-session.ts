import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { DataSnapshot, SessionEvents } from '../types.js';
import type { ContractContext } from './contract-harness.js';
import { rejectsWith } from './contract-basic.js';
import { ValueRecorder } from './recorder.js';

/** Session life cycle: expiry is surfaced and recovered from automatically. */
export function registerSessions(ctx: ContractContext): void {
  it('an expired session is replaced; ephemerals go, watches re-arm on the latest value', async () => {
    const victim = await ctx.client({ sessionTimeoutMs: 4000 });
    const other = await ctx.client();
    const events: string[] = [];
    victim.on('expired', (e: SessionEvents['expired']) => events.push(`expired:${e.sessionId}`));
    victim.on('connected', (e: SessionEvents['connected']) => events.push(`connected:${e.newSession}`));
    const oldId = victim.sessionId;
    assert.match(oldId ?? '', /^[0-9a-f]{16}$/);
    await other.create(ctx.p('watched'), 'before');
    await victim.create(ctx.p('mine'), '', { ephemeral: true });
    const rec = new ValueRecorder<DataSnapshot | undefined>(ctx.clock);
    const unsub = victim.watchData(ctx.p('watched'), rec.fn);
    await rec.waitFor((v) => v?.data === 'before');

    const expired = ctx.next(victim, 'expired');
    await ctx.h.expireSession(victim);
    await other.set(ctx.p('watched'), 'during the gap');
    await expired;
    // The new session after the expiry (a 'connected' event may also come earlier: the real
    // server's bounce of the old session, before it expires).
    await victim.waitConnected({ timeoutMs: 10_000 });
    assert.equal(victim.state, 'connected');
    assert.notEqual(victim.sessionId, oldId, 'a new session');
    // (Against a real server the expiry trick may first bounce the old session: connected:false.)
    assert.deepEqual(events.filter((e) => e !== 'connected:false'), [`expired:${oldId}`, 'connected:true']);
    await ctx.eventually('the old ephemeral is gone', async () => (await other.exists(ctx.p('mine'))) === undefined);
    await rec.waitFor((v) => v?.data === 'during the gap', 'the value written while expired');
    await other.set(ctx.p('watched'), 'after');
    await rec.waitFor((v) => v?.data === 'after', 'a change after the new session');
    await victim.create(ctx.p('mine'), '', { ephemeral: true });
    assert.equal((await other.exists(ctx.p('mine')))?.ephemeralOwner, victim.sessionId);
    unsub();
  });

  it('a reconnection that keeps the session keeps the watches: a change made meanwhile is delivered, a watch begun meanwhile arms', async () => {
    const victim = await ctx.client();
    const other = await ctx.client();
    await other.create(ctx.p('armed'), 'before');
    await other.create(ctx.p('late'), 'before');
    const armed = new ValueRecorder<DataSnapshot | undefined>(ctx.clock);
    const unsubArmed = victim.watchData(ctx.p('armed'), armed.fn);
    await armed.waitFor((v) => v?.data === 'before');
    const oldId = victim.sessionId;
    const suspended = ctx.next(victim, 'suspended');
    const back = ctx.next(victim, 'connected');
    victim.dropConnection();
    await suspended;
    // Made while the victim may still be disconnected (a real client reconnects within ms).
    await other.set(ctx.p('armed'), 'during');
    const late = new ValueRecorder<readonly string[] | undefined>(ctx.clock);
    const unsubLate = victim.watchChildren(ctx.p('late'), late.fn);
    await back;
    assert.equal(victim.sessionId, oldId, 'the same session');
    await armed.waitFor((v) => v?.data === 'during', 'the change made around the reconnection');
    await late.waitFor((v) => v !== undefined && v.length === 0, 'the watch begun while disconnected');
    await other.set(ctx.p('armed'), 'after');
    await armed.waitFor((v) => v?.data === 'after', 'a change after the reconnection');
    await other.create(ctx.p('late/child'));
    await late.waitFor((v) => v?.includes('child') === true, 'a child added after the reconnection');
    unsubArmed();
    unsubLate();
  });

  it('a closed client rejects calls with CLOSED and emits closed', async () => {
    const c = await ctx.client();
    let closed = 0;
    c.on('closed', () => closed++);
    await c.close();
    assert.equal(c.state, 'closed');
    assert.equal(closed, 1);
    await rejectsWith(c.get(ctx.root), 'CLOSED');
    await c.close();
  });
}
