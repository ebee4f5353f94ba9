import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { DataSnapshot } from '../types.js';
import type { ContractContext } from './contract-harness.js';
import { ValueRecorder } from './recorder.js';

type Data = DataSnapshot | undefined;
type Kids = readonly string[] | undefined;

/** Self-re-arming, level-based watches. */
export function registerWatches(ctx: ContractContext): void {
  it('watchData delivers the current value, every change, deletion and re-creation', async () => {
    const w = await ctx.client();
    const r = await ctx.client();
    const rec = new ValueRecorder<Data>(ctx.clock);
    const unsub = r.watchData(ctx.p('d'), rec.fn);
    await rec.waitFor((v) => v === undefined, 'absent');
    await w.create(ctx.p('d'), 'one');
    await rec.waitFor((v) => v?.data === 'one', 'created');
    await w.set(ctx.p('d'), 'two');
    await rec.waitFor((v) => v?.data === 'two' && v.stat.version === 1, 'changed');
    await w.set(ctx.p('d'), 'two');
    await rec.waitFor((v) => v?.stat.version === 2, 'same value, new version');
    await w.delete(ctx.p('d'));
    await rec.waitFor((v) => v === undefined, 'deleted');
    await w.create(ctx.p('d'), 'three');
    await rec.waitFor((v) => v?.data === 'three', 're-created');
    unsub();
  });

  it('watchData coalesces bursts and always ends on the latest value', async () => {
    const w = await ctx.client();
    const r = await ctx.client();
    await w.create(ctx.p('burst'), '0');
    const rec = new ValueRecorder<Data>(ctx.clock);
    const unsub = r.watchData(ctx.p('burst'), async (v) => {
      rec.fn(v);
      await ctx.clock.sleep(5); // a slow consumer
    });
    await rec.waitFor((v) => v?.data === '0');
    await Promise.all(Array.from({ length: 50 }, (_, i) => w.set(ctx.p('burst'), String(i + 1))));
    await rec.waitFor((v) => v?.data === '50', 'the last value');
    assert.ok(rec.values.length <= 52, `coalesced: ${rec.values.length} deliveries for 51 values`);
    const versions = rec.values.map((v) => v?.stat.version ?? -1);
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b), 'never goes back to an older version');
    unsub();
  });

  it('watchChildren delivers the list, additions and removals; undefined while absent', async () => {
    const w = await ctx.client();
    const r = await ctx.client();
    const rec = new ValueRecorder<Kids>(ctx.clock);
    const unsub = r.watchChildren(ctx.p('kids'), rec.fn);
    await rec.waitFor((v) => v === undefined, 'absent parent');
    await w.create(ctx.p('kids'), '');
    await rec.waitFor((v) => v?.length === 0, 'empty');
    await w.create(ctx.p('kids/a'), '');
    await w.create(ctx.p('kids/b'), '');
    await rec.waitFor((v) => [...(v ?? [])].sort().join() === 'a,b', 'a and b');
    await w.delete(ctx.p('kids/a'));
    await rec.waitFor((v) => v?.join() === 'b', 'b only');
    await w.set(ctx.p('kids/b'), 'data change is not a children change');
    await w.delete(ctx.p('kids'));
    await rec.waitFor((v) => v === undefined, 'parent deleted');
    unsub();
  });

  it('unsubscribe stops deliveries; a throwing watcher keeps its watch', async () => {
    const c = await ctx.client();
    await c.create(ctx.p('u'), '0');
    const stopped = new ValueRecorder<Data>(ctx.clock);
    const unsub = c.watchData(ctx.p('u'), stopped.fn);
    const thrower = new ValueRecorder<Data>(ctx.clock);
    const unsub2 = c.watchData(ctx.p('u'), (v) => {
      thrower.fn(v);
      throw new Error('watcher bug');
    });
    await stopped.waitFor((v) => v?.data === '0');
    unsub();
    const count = stopped.values.length;
    await c.set(ctx.p('u'), '1');
    await c.set(ctx.p('u'), '2');
    await thrower.waitFor((v) => v?.data === '2', 'deliveries after the watcher threw');
    assert.equal(stopped.values.length, count, 'no delivery after unsubscribe');
    unsub2();
  });
}
