/**
 * Node flush/unflush on a real harness cluster, shared by `vmd-flush.test.ts` and `bench/flush.ts`:
 * guests defined and started on hv1 with `pvc vm define --target hv1` + `pvc vm start`, then
 * `pvc node flush hv1` / `pvc node ready hv1`; vmd on hv1 moves the guests. A poller (every 200 ms) records whether
 * `flushed` was ever seen while virsh on hv1 still listed a running guest.
 */
import { realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { waitFor, type ClusterHost } from './harness/index.js';
import type { FailoverCluster } from './failover-scenario.js';
import { runningOn, type MigGuest } from './migration-scenario.js';

export const flushUuid = (i: number): string => `e1000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Defines `n` guests on `host` (state start; memory cycling through `memories`) and waits for all to run there. */
export async function placeGuests(fc: FailoverCluster, host: ClusterHost, n: number, memories: readonly number[] = [96]): Promise<MigGuest[]> {
  const guests = Array.from({ length: n }, (_, i) => ({ name: `fl${i + 1}`, uuid: flushUuid(i + 1) }));
  for (const [i, g] of guests.entries()) {
    await fc.cli.define(fc.cluster.guest.domainXml(g.name, { uuid: g.uuid, memoryMiB: memories[i % memories.length]! }), host.name);
    await fc.cli.ok('vm', 'start', g.name);
  }
  await waitFor(`${n} guests running on ${host.name}`, 300_000, async () => {
    const on = await runningOn(host);
    return guests.every((g) => on.includes(g.uuid)) ? true : undefined;
  }, 500);
  return guests;
}

/** One flush or unflush, timed from the domainstate write to the final state. */
export interface FlushRun {
  ms: number;
  /** `flushed` (or `ready`) seen while virsh on the node still listed a running guest. */
  earlyFinal: string[];
  polls: number;
}

/**
 * `pvc node flush <host>` (or `pvc node ready`) and waits (≤ timeoutMs) for `final`, polling ZK +
 * virsh every 200 ms. Timed from the CLI's write of `domainstate` (its modification time on the ZK
 * server), not from the CLI's start-up.
 */
export async function flushAndWait(fc: FailoverCluster, host: ClusterHost, guests: readonly MigGuest[], ask: 'flush' | 'unflush', timeoutMs = 300_000): Promise<FlushRun> {
  const final = ask === 'flush' ? 'flushed' : 'ready';
  const key = paths.node(host.name).domainState;
  const spawned = realClock.now();
  const before = (await fc.zk.get(key)).stat.version;
  await fc.cli.ok('node', ask === 'flush' ? 'flush' : 'ready', host.name);
  const after = await fc.zk.get(key);
  // Exactly one write since `before` is the CLI's; when vmd already wrote the final state, fall back to the spawn time.
  const t0 = after.stat.version === before + 1 ? after.stat.mtime : spawned;
  const earlyFinal: string[] = [];
  let polls = 0;
  await waitFor(`${host.name} ${final}`, timeoutMs, async () => {
    // virsh first, then ZK: `flushed` read after a list that still showed a guest means it came too early.
    const on = await runningOn(host);
    const st = await fc.zk.read(key);
    polls++;
    const ours = on.filter((u) => guests.some((g) => g.uuid === u));
    if (st === 'flushed' && ask === 'flush' && ours.length > 0) earlyFinal.push(`${new Date().toISOString()} flushed with ${ours.join(',')} running`);
    return st === final ? true : undefined;
  }, 200);
  return { ms: realClock.now() - t0, earlyFinal, polls };
}

/** Where each guest runs (virsh, state running), by host name. */
export async function placement(hosts: readonly ClusterHost[], guests: readonly MigGuest[]): Promise<Map<string, string[]>> {
  const lists = await Promise.all(hosts.map(async (h) => [h.name, await runningOn(h)] as const));
  return new Map(guests.map((g) => [g.uuid, lists.filter(([, us]) => us.includes(g.uuid)).map(([h]) => h)]));
}
