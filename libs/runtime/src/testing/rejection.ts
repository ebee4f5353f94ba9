/**
 * For tests: awaits `p`, which must reject with an instance of `cls`, and returns that error so the
 * test can assert on its code and message. Throws when `p` resolves or rejects with anything else.
 */
export async function rejectionOf<E extends Error>(p: Promise<unknown>, cls: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (err) {
    if (err instanceof cls) return err;
    throw new Error(`expected a ${cls.name}, got ${String(err)}`, { cause: err });
  }
  throw new Error(`expected a ${cls.name}, but the promise resolved`);
}
