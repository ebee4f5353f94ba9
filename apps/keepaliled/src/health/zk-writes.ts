/**
 * What the monitor writes under `/nodes/<node>` (schema v15 keys, the original's encodings):
 * planned as pure lists of pairs, applied in one transaction each.
 *
 * @module
 */
import { nodeKeys, pair, pluginKeys } from '@pvc/zk';
import type { WritePair } from '@pvc/zk';
import { runtimeText } from './result.js';
import type { NormalizedResult } from './result.js';

/** One plugin's stored state after a run. */
export interface StoredPlugin {
  name: string;
  result: NormalizedResult;
  /** Epoch seconds (integer) when the result was taken. */
  lastRun: number;
  runtimeMs: number;
}

/**
 * The start-up transaction: `monitoring_plugins` (space-separated, as the original's
 * `" ".join(...)`), and for every loaded plugin its root (value: the plugin name) plus delta 0, message `Initializing`,
 * data `{}`, runtime `0.00`, last_run 0 (never run). The `monitoring_data` parent is listed first
 * so the transaction also works on a node object that lacks it.
 */
export function initPairs(node: string, names: readonly string[]): WritePair[] {
  const n = nodeKeys(node);
  const pairs: WritePair[] = [pair(n.monitoringPlugins, [...names]), pair(n.monitoringData, '')];
  for (const name of names) {
    const p = pluginKeys(node, name);
    pairs.push(
      pair(p.root, name), pair(p.lastRun, 0), pair(p.healthDelta, 0), pair(p.message, 'Initializing'), pair(p.data, {}), pair(p.runtime, '0.00'),
    );
  }
  return pairs;
}

/** Plugin keys under `monitoring_data` that belong to no loaded plugin (to delete at start). */
export function stalePlugins(existing: readonly string[], loaded: readonly string[]): string[] {
  return existing.filter((e) => !loaded.includes(e)).sort();
}

/**
 * One run's transaction: every plugin's root and five keys, then `monitoring_health`. `last_run`
 * is the time of this run; the original stamps the time its result object was created, once at
 * start, so its `last_run` never moves **[bug?]** — we write what it plainly intends.
 */
export function runPairs(node: string, plugins: readonly StoredPlugin[], health: number): WritePair[] {
  const pairs: WritePair[] = [];
  for (const s of plugins) {
    const p = pluginKeys(node, s.name);
    pairs.push(
      pair(p.root, s.name),
      pair(p.lastRun, s.lastRun),
      pair(p.healthDelta, s.result.delta),
      pair(p.message, s.result.message),
      // Already JSON text: `normalizeResult` serialised it to prove it can be stored.
      [p.data.path, s.result.dataJson],
      pair(p.runtime, runtimeText(s.runtimeMs)),
    );
  }
  pairs.push(pair(nodeKeys(node).monitoringHealth, health));
  return pairs;
}

/** The shutdown write: health unknown (`None`), as the original's pvchealthd at exit. */
export function stopPairs(node: string): WritePair[] {
  return [pair(nodeKeys(node).monitoringHealth, null)];
}
