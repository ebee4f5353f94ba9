import { stripVTControlCharacters } from 'node:util';
import { logKeys, readKeyIfExists, watchKey } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { refused, usage } from '../errors.js';
import { findNode } from '../lookup.js';
import type { Format } from '../output.js';

/** Default `--lines` of `pvc node log` (the original API's default). */
export const DEFAULT_LOG_LINES = 10;

/** Parses `-l/--lines`: a positive integer. */
export function parseLines(raw: string | undefined): number {
  const n = Number(raw ?? DEFAULT_LOG_LINES);
  if (!Number.isInteger(n) || n <= 0) throw usage(`--lines: expected a positive whole number, got "${raw ?? ''}"`);
  return n;
}

/** The lines of a `/logs/<node>/messages` value (newline-joined; a trailing newline adds no line). */
export function splitLog(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The lines of `next` that `prev` did not have. The key holds the last N lines, so a new value is
 * the old one with lines appended and, once full, as many dropped from the front: the longest
 * suffix of `prev` that starts `next` is what both share. No overlap at all (the log was replaced
 * or more than N lines arrived at once): every line of `next` is new.
 */
export function newLines(prev: readonly string[], next: readonly string[]): string[] {
  for (let k = Math.min(prev.length, next.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = prev[prev.length - k + i] === next[i];
    if (same) return next.slice(k);
  }
  return [...next];
}

function noLog(node: string): Error {
  return refused(`node ${node} has no log in Zookeeper (its daemons do not write one, or logging to ZK is off)`);
}

/**
 * `pvc node log <node>`: the last `lines` lines of the node's daemon log in ZK; with `follow`,
 * then every new line until Ctrl-C (the abort signal). ANSI colours are kept only on a terminal;
 * JSON (`{node, lines}`) keeps the lines as stored.
 */
export async function showNodeLog(ctx: CliContext, name: string, lines: number, follow: boolean, format: Format = 'human'): Promise<void> {
  const { zk } = await ctx.cluster();
  const node = await findNode(zk, name);
  const key = logKeys(node).messages;
  const text = await readKeyIfExists(zk, key);
  if (text === undefined) throw noLog(node);
  const print = (ls: readonly string[]): void => {
    for (const l of ls) ctx.output.line(ctx.output.colour ? l : stripVTControlCharacters(l));
  };
  let seen = splitLog(text);
  if (format === 'json') return ctx.output.json({ node, lines: seen.slice(-lines) });
  print(seen.slice(-lines));
  if (!follow) return;
  const signal = ctx.io.signal;
  if (signal?.aborted) return;
  await new Promise<void>((resolve) => {
    const stop = watchKey(zk, key, (value) => {
      if (value === undefined) return;
      const next = splitLog(value);
      print(newLines(seen, next));
      seen = next;
    });
    const done = (): void => {
      stop();
      resolve();
    };
    if (signal) signal.addEventListener('abort', done, { once: true });
  });
}
