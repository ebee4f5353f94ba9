/**
 * The caller lookup the metadata API uses: `lookupCaller` (libs/zk) on netd's Zookeeper session,
 * bounded in time, with the bad data it met logged once per key and problem (not once per request).
 *
 * @module
 */
import { lookupCaller, type CallerLookup, type ZkClient } from '@pvc/zk';
import type { Logger } from '@pvc/runtime';

const MAX_REMEMBERED = 10_000;

/** Builds `identify(caller)`; each lookup is bounded by `timeoutMs` (default 5 s). */
export function zkIdentify(zk: ZkClient, logger: Logger, timeoutMs = 5_000): (caller: string) => Promise<CallerLookup> {
  const reported = new Set<string>();
  return async (caller) => {
    const { result, problems } = await lookupCaller(zk, caller, { timeoutMs });
    for (const p of problems) {
      const id = `${p.key}\n${p.problem}`;
      if (reported.has(id)) continue;
      if (reported.size >= MAX_REMEMBERED) reported.clear();
      reported.add(id);
      logger.warn({ key: p.key, problem: p.problem, effect: p.effect }, `bad value in Zookeeper for the metadata lookup: ${p.key}: ${p.problem} (${p.effect})`);
    }
    return result;
  };
}
