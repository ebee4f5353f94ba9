/** A timer of a virtual clock: due at `at`, ties broken by `seq` (creation order). */
export interface HeapTimer {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
}

interface Slot {
  timer: HeapTimer;
  /** Position in the heap array; -1 once popped or removed. */
  index: number;
}

/** Opaque handle of a queued timer, for {@link TimerHeap.remove}. */
export type TimerHandle = object;

/**
 * A binary min-heap of timers by (`at`, `seq`), with removal by handle: push, pop and remove cost
 * O(log n) where a sorted array costs O(n) — {@link VirtualClock} in the simulator holds thousands of
 * timers at once (one deadline per ZK request in flight), most removed before they fire.
 */
export class TimerHeap {
  private readonly slots: Slot[] = [];

  get size(): number {
    return this.slots.length;
  }

  /** The earliest timer, without removing it. */
  peek(): HeapTimer | undefined {
    return this.slots[0]?.timer;
  }

  push(timer: HeapTimer): TimerHandle {
    const slot: Slot = { timer, index: this.slots.length };
    this.slots.push(slot);
    this.up(slot.index);
    return slot;
  }

  /** Removes and returns the earliest timer. */
  pop(): HeapTimer | undefined {
    const top = this.slots[0];
    if (top === undefined) return undefined;
    this.removeAt(0);
    return top.timer;
  }

  /** Removes a queued timer; a no-op when it already fired or was removed. */
  remove(handle: TimerHandle): void {
    const slot = handle as Slot;
    if (slot.index >= 0 && this.slots[slot.index] === slot) this.removeAt(slot.index);
  }

  private removeAt(i: number): void {
    const gone = this.slots[i] as Slot;
    const last = this.slots.pop() as Slot;
    gone.index = -1;
    if (last === gone) return;
    this.place(last, i);
    this.down(i);
    this.up(i);
  }

  private up(i: number): void {
    const slot = this.slots[i] as Slot;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = this.slots[parent] as Slot;
      if (!before(slot.timer, p.timer)) break;
      this.place(p, i);
      i = parent;
    }
    this.place(slot, i);
  }

  private down(i: number): void {
    const slot = this.slots[i] as Slot;
    const n = this.slots.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && before((this.slots[r] as Slot).timer, (this.slots[l] as Slot).timer) ? r : l;
      const c = this.slots[child] as Slot;
      if (!before(c.timer, slot.timer)) break;
      this.place(c, i);
      i = child;
    }
    this.place(slot, i);
  }

  private place(slot: Slot, i: number): void {
    this.slots[i] = slot;
    slot.index = i;
  }
}

function before(a: HeapTimer, b: HeapTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
