/** Helpers the service benches share (start-up timing against a real Zookeeper). */
import type { ZkClient } from '@pvc/zk';

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `path` every 5 ms until it reads `want`; returns `performance.now()` then. */
export async function waitValue(zk: ZkClient, path: string, want: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if ((await zk.read(path).catch(() => undefined)) === want) return performance.now();
    await sleep(5);
  }
  throw new Error(`${path} did not become ${want} within ${timeoutMs} ms`);
}
