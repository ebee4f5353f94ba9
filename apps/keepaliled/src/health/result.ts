/**
 * Turning whatever a plugin returned (or threw) into a stored result. Plugin code is not ours:
 * nothing it returns may crash the monitor.
 *
 * @module
 */
import { describeError } from '@pvc/runtime';

/** Delta charged when a plugin throws, times out or returns something unusable. */
export const PLUGIN_FAILURE_DELTA = 10;
/** Largest delta one plugin can take. */
export const MAX_DELTA = 100;
/** Longest stored message. */
const MAX_MESSAGE = 1000;

/** A result ready to be stored: integer delta 0–100, one-line message, JSON-safe data. */
export interface NormalizedResult {
  delta: number;
  message: string;
  /** JSON text of the data. */
  dataJson: string;
  /** What was wrong with the plugin's answer, for the log; undefined when it was fine. */
  problem?: string;
}

function normalizeDelta(raw: unknown): { delta: number; problem?: string } {
  if (typeof raw !== 'number' || !Number.isFinite(raw)) {
    return { delta: PLUGIN_FAILURE_DELTA, problem: `delta is not a number (${describeValue(raw)})` };
  }
  if (raw < 0) return { delta: 0, problem: `negative delta ${raw} clamped to 0` };
  if (raw > MAX_DELTA) return { delta: MAX_DELTA, problem: `delta ${raw} clamped to ${MAX_DELTA}` };
  if (!Number.isInteger(raw)) return { delta: Math.round(raw), problem: `non-integer delta ${raw} rounded` };
  return { delta: raw };
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.slice(0, 40));
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : String(v);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, '; ').trim();
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
}

function dataJson(raw: unknown): { json: string; problem?: string } {
  if (raw === undefined || raw === null) return { json: '{}' };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { json: '{}', problem: 'data is not an object' };
  try {
    return { json: JSON.stringify(raw) };
  } catch (err) {
    return { json: '{}', problem: `data is not JSON-serialisable: ${describeError(err)}` };
  }
}

/** Normalises the value a plugin's `run()` resolved with. */
export function normalizeResult(raw: unknown): NormalizedResult {
  if (raw === null || typeof raw !== 'object') {
    return { delta: PLUGIN_FAILURE_DELTA, message: 'bad result: not an object', dataJson: '{}', problem: 'result is not an object' };
  }
  const r = raw as Record<string, unknown>;
  const d = normalizeDelta(r['delta']);
  const msg = typeof r['message'] === 'string' ? r['message'] : r['message'] === undefined ? '' : String(r['message']);
  const data = dataJson(r['data']);
  const problems = [d.problem, data.problem].filter((p): p is string => p !== undefined);
  const base = { delta: d.delta, message: oneLine(msg), dataJson: data.json };
  return problems.length > 0 ? { ...base, problem: problems.join('; ') } : base;
}

/** The stored result of a run that threw. */
export function failedResult(err: unknown): NormalizedResult {
  const msg = oneLine(`failed: ${describeError(err)}`);
  return { delta: PLUGIN_FAILURE_DELTA, message: msg, dataJson: '{}', problem: msg };
}

/** The stored result of a run that did not finish in time (or is still running from before). */
export function timedOutResult(timeoutMs: number, stillRunning: boolean): NormalizedResult {
  const s = formatSeconds(timeoutMs);
  const msg = stillRunning ? `timed out after ${s} s (previous run still running; not restarted)` : `timed out after ${s} s`;
  return { delta: PLUGIN_FAILURE_DELTA, message: msg, dataJson: '{}', problem: msg };
}

/** Seconds with at most two decimals and no trailing zeros (`15`, `0.5`). */
function formatSeconds(ms: number): string {
  return String(Math.round(ms / 10) / 100);
}

/** The original's runtime text: seconds with two decimals (`"0.00"`). */
export function runtimeText(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(2);
}

/** Node health from the deltas: max(0, 100 − Σ deltas). */
export function healthFrom(deltas: readonly number[]): number {
  return Math.max(0, 100 - deltas.reduce((a, b) => a + b, 0));
}
