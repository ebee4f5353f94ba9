import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prng } from './testing/prng.js';
import { TimerHeap, type HeapTimer, type TimerHandle } from './timer-heap.js';

/**
 * The heap against the obvious model, a list sorted by (at, seq) — what VirtualClock kept before:
 * seeded pushes (many ties), removals of queued and of already-popped timers, and pops; every pop
 * and the size must agree at every step.
 */
test('TimerHeap pops what a sorted list pops, with ties in creation order and removals', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const r = prng(seed);
    const heap = new TimerHeap();
    const model: HeapTimer[] = [];
    const handles: { timer: HeapTimer; handle: TimerHandle }[] = [];
    let seq = 0;
    let pops = 0;
    for (let step = 0; step < 5_000; step++) {
      const roll = r();
      if (roll < 0.5) {
        const timer: HeapTimer = { at: Math.floor(r() * 20) * 250, seq: seq++, fire: () => undefined };
        handles.push({ timer, handle: heap.push(timer) });
        model.push(timer);
        model.sort((a, b) => a.at - b.at || a.seq - b.seq);
      } else if (roll < 0.75 && handles.length > 0) {
        const [{ timer, handle }] = handles.splice(Math.floor(r() * handles.length), 1) as [{ timer: HeapTimer; handle: TimerHandle }];
        heap.remove(handle);
        const i = model.indexOf(timer);
        if (i !== -1) model.splice(i, 1);
      } else {
        assert.equal(heap.peek(), model[0], `seed ${seed} step ${step}: peek`);
        assert.equal(heap.pop(), model.shift(), `seed ${seed} step ${step}: pop`);
        pops++;
      }
      assert.equal(heap.size, model.length, `seed ${seed} step ${step}: size`);
    }
    assert.ok(pops > 1_000, `seed ${seed}: a real trace (${pops} pops)`);
  }
});
