/**
 * One monitoring run: every plugin concurrently, each bounded; the results normalised; health
 * computed. Pure of ZK: the monitor writes what this returns.
 *
 * @module
 */
import type { Clock, Logger } from '@pvc/runtime';
import { callBounded } from './bounded.js';
import { pluginContext } from './context.js';
import type { ContextBase } from './context.js';
import type { LoadedPlugin } from './loader.js';
import { failedResult, healthFrom, normalizeResult, timedOutResult } from './result.js';
import type { NormalizedResult } from './result.js';
import type { StoredPlugin } from './zk-writes.js';

/**
 * A plugin's run state: `idle` between runs, `running` during a run, `overdue` when a run passed
 * its deadline and has not settled yet (it is not started again until it does).
 */
export type SlotState = 'idle' | 'running' | 'overdue';

/** A loaded plugin and its run state. */
export interface PluginSlot {
  loaded: LoadedPlugin;
  state: SlotState;
  /** Clock time the current or overdue run started. */
  startedAt: number;
  last: StoredPlugin;
}

/** What a cycle needs. */
export interface CycleDeps {
  base: ContextBase;
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  /** Aborted at stop: running calls are abandoned at once. */
  stop: AbortSignal;
}

/** A new slot, as written at start (`Initializing`). */
export function newSlot(loaded: LoadedPlugin): PluginSlot {
  return {
    loaded,
    state: 'idle',
    startedAt: 0,
    last: { name: loaded.name, lastRun: 0, runtimeMs: 0, result: { delta: 0, message: 'Initializing', dataJson: '{}' } },
  };
}

function record(slot: PluginSlot, deps: CycleDeps, result: NormalizedResult, runtimeMs: number): void {
  const now = deps.clock.now();
  slot.last = { name: slot.loaded.name, result, lastRun: Math.floor(now / 1000), runtimeMs };
  if (result.problem !== undefined) {
    deps.logger.warn({ plugin: slot.loaded.name, file: slot.loaded.file, delta: result.delta }, `health plugin ${slot.loaded.name}: ${result.problem}`);
  }
}

/** Runs one plugin (or reports it overdue). Never rejects. */
async function runSlot(slot: PluginSlot, deps: CycleDeps): Promise<void> {
  const { clock } = deps;
  if (slot.state === 'overdue') {
    record(slot, deps, timedOutResult(deps.timeoutMs, true), clock.now() - slot.startedAt);
    return;
  }
  slot.state = 'running';
  slot.startedAt = clock.now();
  const outcome = await callBounded(
    (signal) => slot.loaded.plugin.run(pluginContext(deps.base, slot.loaded.name, signal)),
    deps.timeoutMs,
    clock,
    deps.stop,
  );
  const runtimeMs = clock.now() - slot.startedAt;
  switch (outcome.kind) {
    case 'ok':
      slot.state = 'idle';
      record(slot, deps, normalizeResult(outcome.value), runtimeMs);
      return;
    case 'error':
      slot.state = 'idle';
      record(slot, deps, failedResult(outcome.error), runtimeMs);
      return;
    case 'timeout':
      slot.state = 'overdue';
      void outcome.settled.then(() => {
        slot.state = 'idle';
      });
      record(slot, deps, timedOutResult(deps.timeoutMs, false), runtimeMs);
      return;
    case 'stopped':
      slot.state = 'idle';
      return;
  }
}

/** Runs every plugin concurrently and returns the node health from their deltas. */
export async function runCycle(slots: readonly PluginSlot[], deps: CycleDeps): Promise<number> {
  await Promise.all(slots.map((s) => runSlot(s, deps)));
  return healthFrom(slots.map((s) => s.last.result.delta));
}
