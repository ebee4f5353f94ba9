/**
 * Serial, coalescing execution of one job (netd's firewall reload; use it for any "do it again
 * when asked, one at a time" job instead of a hand-made wake loop).
 */

interface Batch<R> {
  readonly reasons: string[];
  readonly promise: Promise<R>;
  resolve(value: R): void;
  reject(err: unknown): void;
}

function newBatch<R>(reason: string): Batch<R> {
  let resolve!: (value: R) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<R>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { reasons: [reason], promise, resolve, reject };
}

/**
 * Runs `work` one pass at a time. Contract:
 * - a request while nothing runs starts a pass at once;
 * - requests while a pass runs are merged into exactly one more pass, started when the running
 *   one ends (its `reasons` lists every merged request, in order);
 * - each request resolves (or rejects) with the outcome of the first pass that started after it,
 *   so a caller never gets the result of a pass that began before it asked.
 */
export class CoalescingRunner<R> {
  private next: Batch<R> | undefined;
  private draining: Promise<void> | undefined;

  constructor(private readonly work: (reasons: readonly string[]) => Promise<R>) {}

  /** Asks for a pass; resolves with that pass's result. */
  request(reason: string): Promise<R> {
    if (this.next) {
      this.next.reasons.push(reason);
      return this.next.promise;
    }
    const batch = newBatch<R>(reason);
    this.next = batch;
    this.draining ??= this.drain();
    return batch.promise;
  }

  /** Whether a pass is running or waiting to run. */
  get busy(): boolean {
    return this.draining !== undefined;
  }

  /** Resolves once no pass is running and none is waiting. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    // Yield once so requests made in the same tick as the first join its pass.
    await Promise.resolve();
    try {
      for (let batch = this.next; batch; batch = this.next) {
        this.next = undefined;
        try {
          batch.resolve(await this.work(batch.reasons));
        } catch (err) {
          batch.reject(err);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }
}
