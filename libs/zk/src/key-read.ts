import type { Logger } from '@pvc/runtime';
import type { KeySpec } from './keys.js';
import type { DataSnapshot, OpOptions, Unsubscribe, ZkClient, ZkStat } from './types.js';

/**
 * Reading keys through their codec (the only way apps read values; `eslint.config.mjs` forbids
 * raw `zk.read`/`zk.get`/`zk.watchData` outside `libs/zk`).
 *
 * Bad input: a stored value the key's codec does not accept is logged once per key and value
 * (`bad value in Zookeeper`, with the key, the value and what was expected) and the reader gets
 * the key's fallback — the original's default. Nothing is written back: only the key's owner
 * may overwrite it. An empty value where the codec takes none (a key the original's schema
 * validation created empty) is the fallback without a log line.
 */

let defaultLogger: Logger | undefined;
const reported = new Set<string>();
const MAX_REPORTED = 10_000;

/** Where bad values are logged when a call passes no logger (set once by each service's main). */
export function setBadValueLogger(logger: Logger | undefined): void {
  defaultLogger = logger;
}

/** Options of the key readers. */
export interface KeyReadOptions extends OpOptions {
  /** Where a bad value is reported; default the one given to {@link setBadValueLogger}. */
  logger?: Logger;
}

/** Decodes `raw` (undefined = absent) for `spec`, falling back as described above. */
export function decodeKey<T, F>(spec: KeySpec<T, F>, raw: string | undefined, logger?: Logger): T | F {
  if (raw === undefined) return spec.fallback;
  try {
    return spec.codec.decode(raw, spec.path);
  } catch (err) {
    if (raw.trim() === '') return spec.fallback;
    reportBadValue(spec, raw, logger ?? defaultLogger, err);
    return spec.fallback;
  }
}

function reportBadValue(spec: KeySpec<unknown, unknown>, raw: string, logger: Logger | undefined, err: unknown): void {
  const id = `${spec.path}\0${raw}`;
  if (reported.has(id)) return;
  if (reported.size >= MAX_REPORTED) reported.clear();
  reported.add(id);
  logger?.warn(
    { key: spec.path, value: raw.length > 200 ? `${raw.slice(0, 200)}…` : raw, expected: spec.codec.format, fallback: describeFallback(spec.fallback), err: err instanceof Error ? err.message : String(err) },
    `bad value in Zookeeper at ${spec.path}: ${JSON.stringify(raw.slice(0, 60))} is not ${spec.codec.format}; using the default`,
  );
}

function describeFallback(v: unknown): string {
  return v === undefined ? 'unknown' : JSON.stringify(v);
}

/** Forgets which bad values were reported (tests). */
export function resetBadValueReports(): void {
  reported.clear();
}

/**
 * Decodes `raw` for `spec` without standing in the default: `undefined` when the key is absent,
 * empty where the codec takes no `""`, or holds a value the codec does not accept (logged as for
 * {@link decodeKey}). For readers that must report nothing rather than a default they cannot tell
 * from a real value (the Prometheus metrics).
 */
export function decodeKnown<T>(spec: KeySpec<T, unknown>, raw: string | undefined, logger?: Logger): T | undefined {
  if (raw === undefined) return undefined;
  try {
    return spec.codec.decode(raw, spec.path);
  } catch (err) {
    if (raw.trim() !== '') reportBadValue(spec, raw, logger ?? defaultLogger, err);
    return undefined;
  }
}

type Known<S extends readonly KeySpec<unknown, unknown>[]> = { [I in keyof S]: S[I] extends KeySpec<infer T, unknown> ? T | undefined : never };

/** Reads several keys in parallel through {@link decodeKnown}: `undefined` for each absent or bad one. */
export async function readKnownKeys<const S extends readonly KeySpec<unknown, unknown>[]>(zk: ZkClient, specs: S, opts: KeyReadOptions = {}): Promise<Known<S>> {
  const o = opOptions(opts);
  const raws = await Promise.all(specs.map((s) => zk.read(s.path, o)));
  return specs.map((s, i) => decodeKnown(s, raws[i], opts.logger)) as Known<S>;
}

/** Reads and decodes one key; an absent key is its fallback. */
export async function readKey<T, F>(zk: ZkClient, spec: KeySpec<T, F>, opts: KeyReadOptions = {}): Promise<T | F> {
  return decodeKey(spec, await zk.read(spec.path, opOptions(opts)), opts.logger);
}

/** Reads and decodes one key; `undefined` when the key does not exist. */
export async function readKeyIfExists<T, F>(zk: ZkClient, spec: KeySpec<T, F>, opts: KeyReadOptions = {}): Promise<T | F | undefined> {
  const raw = await zk.read(spec.path, opOptions(opts));
  return raw === undefined ? undefined : decodeKey(spec, raw, opts.logger);
}

/** A decoded value with the node's stat (for a conditional write on the version read). */
export interface KeySnapshot<V> {
  value: V;
  stat: ZkStat;
}

/** Reads one key with its stat; `undefined` when the key does not exist. */
export async function readKeyWithStat<T, F>(zk: ZkClient, spec: KeySpec<T, F>, opts: KeyReadOptions = {}): Promise<KeySnapshot<T | F> | undefined> {
  const snap = await zk.get(spec.path, opOptions(opts)).catch((err: unknown) => {
    if ((err as { code?: string }).code === 'NO_NODE') return undefined;
    throw err;
  });
  return snap === undefined ? undefined : { value: decodeKey(spec, snap.data, opts.logger), stat: snap.stat };
}

type Values<S extends readonly KeySpec<unknown, unknown>[]> = { [I in keyof S]: S[I] extends KeySpec<infer T, infer F> ? T | F : never };

/** Reads several keys in parallel, each through its codec. */
export async function readKeys<const S extends readonly KeySpec<unknown, unknown>[]>(zk: ZkClient, specs: S, opts: KeyReadOptions = {}): Promise<Values<S>> {
  const o = opOptions(opts);
  const raws = await Promise.all(specs.map((s) => zk.read(s.path, o)));
  return specs.map((s, i) => decodeKey(s, raws[i], opts.logger)) as Values<S>;
}

/**
 * A self-re-arming watch of one key, delivering the decoded value (`undefined` while the key does
 * not exist) and the raw snapshot.
 */
export function watchKey<T, F>(
  zk: ZkClient,
  spec: KeySpec<T, F>,
  watcher: (value: T | F | undefined, snapshot: DataSnapshot | undefined) => void | Promise<void>,
  logger?: Logger,
): Unsubscribe {
  return zk.watchData(spec.path, (snap) => watcher(snap === undefined ? undefined : decodeKey(spec, snap.data, logger), snap));
}

function opOptions(opts: KeyReadOptions): OpOptions {
  const o: OpOptions = {};
  if (opts.signal) o.signal = opts.signal;
  if (opts.timeoutMs !== undefined) o.timeoutMs = opts.timeoutMs;
  return o;
}
