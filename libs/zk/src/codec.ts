import { ZkDataError } from './errors.js';

/**
 * Value codecs matching the original's encoding: every value is the UTF-8 text of Python's
 * `str(value)`. Encoders are total; decoders are strict and throw {@link ZkDataError}
 * (code ZK_BAD_DATA, naming the key and the bad value) — or use {@link safeDecode} for a result.
 */
export interface Codec<T> {
  /** Human description of the format, used in error messages. */
  readonly format: string;
  encode(value: T): string;
  /** Decodes `raw` read from `key`; throws {@link ZkDataError}. */
  decode(raw: string, key: string): T;
}

/** Result of {@link safeDecode}. */
export type DecodeResult<T> = { ok: true; value: T } | { ok: false; error: ZkDataError };

/** Decodes without throwing, for log-and-skip handling of bad data. */
export function safeDecode<T>(codec: Codec<T>, raw: string, key: string): DecodeResult<T> {
  try {
    return { ok: true, value: codec.decode(raw, key) };
  } catch (err) {
    if (err instanceof ZkDataError) return { ok: false, error: err };
    throw err;
  }
}

const INT_RE = /^-?\d+$/;
const FLOAT_RE = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Python `repr(float)`: shortest round-trip digits, `1.0` for integral values, `1e-05`, `1e+16`. */
export function pythonFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant = '0', expText = '0'] = x.toExponential().split('e');
  const exp = Number(expText);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  const sign = neg ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${intPart}.${frac === '' ? '0' : frac}`;
}

/** Plain text, unchanged. */
export const text: Codec<string> = { format: 'text', encode: (v) => v, decode: (raw) => raw };

/** Integers as decimal text (Python `str(int)`). */
export const int: Codec<number> = {
  format: 'an integer',
  encode: (v) => {
    if (!Number.isSafeInteger(v)) throw new RangeError(`not a safe integer: ${v}`);
    return String(v);
  },
  decode: (raw, key) => {
    const v = Number(raw);
    if (!INT_RE.test(raw) || !Number.isSafeInteger(v)) throw new ZkDataError(key, raw, 'an integer');
    return v;
  },
};

/** Floats as Python `repr` (e.g. `1712345678.123456`, `0.0`); reads any decimal or `inf`/`nan`. */
export const float: Codec<number> = {
  format: 'a number',
  encode: pythonFloat,
  decode: (raw, key) => {
    if (raw === 'inf') return Infinity;
    if (raw === '-inf') return -Infinity;
    if (raw === 'nan') return NaN;
    if (!FLOAT_RE.test(raw)) throw new ZkDataError(key, raw, 'a number');
    return Number(raw);
  },
};

/** Python booleans: exactly `True` / `False`. */
export const bool: Codec<boolean> = {
  format: 'True or False',
  encode: (v) => (v ? 'True' : 'False'),
  decode: (raw, key) => {
    if (raw === 'True') return true;
    if (raw === 'False') return false;
    throw new ZkDataError(key, raw, 'True or False');
  },
};

const TRUTHY = new Set(['y', 'yes', 't', 'true', 'on', '1']);
const FALSY = new Set(['n', 'no', 'f', 'false', 'off', '0']);

/**
 * Python `strtobool` reading (case-insensitive y/yes/t/true/on/1 and n/no/f/false/off/0); writes
 * lower-case `true`/`false`, as the API writes `/config/maintenance`.
 */
export const strtobool: Codec<boolean> = {
  format: 'a strtobool value (true/false)',
  encode: (v) => (v ? 'true' : 'false'),
  decode: (raw, key) => {
    const v = raw.toLowerCase();
    if (TRUTHY.has(v)) return true;
    if (FALSY.has(v)) return false;
    throw new ZkDataError(key, raw, 'a strtobool value (true/false)');
  },
};

/** `None` ⇄ null, anything else through `inner` (e.g. network gateways, `monitoring_health`). */
export function nullable<T>(inner: Codec<T>): Codec<T | null> {
  return {
    format: `None or ${inner.format}`,
    encode: (v) => (v === null ? 'None' : inner.encode(v)),
    decode: (raw, key) => (raw === 'None' ? null : inner.decode(raw, key)),
  };
}

/** Space-separated list (Python `' '.join` / `.split()`); empty text = empty list. */
export const spaceList: Codec<string[]> = {
  format: 'a space-separated list',
  encode: (v) => v.join(' '),
  decode: (raw) => raw.split(/\s+/).filter((s) => s !== ''),
};

/**
 * Comma-separated list (`rbdlist`, `node_limit`, `name_servers`). Empty text and `None` (Python
 * `str(None)`, which the original's API writes for an absent list) are the empty list; items are
 * trimmed and empty items dropped, as the original's readers do before using them.
 */
export const commaList: Codec<string[]> = {
  format: 'a comma-separated list',
  encode: (v) => v.join(','),
  decode: (raw) => (raw.trim() === '' || raw.trim() === 'None' ? [] : raw.split(',').map((s) => s.trim()).filter((s) => s !== '')),
};

/**
 * `runningdomains`: space-separated UUIDs, where the original writes `"0"` at node creation and
 * after a fence to mean "none" (and `""` after a flush). Both decode to an empty list.
 */
export const runningDomains: Codec<string[]> = {
  format: 'a space-separated list of VM UUIDs',
  encode: (v) => v.join(' '),
  decode: (raw) => (raw.trim() === '0' ? [] : spaceList.decode(raw, '')),
};

/**
 * `networks_up` (ours, not in schema v15): the VNIs of the `vmbr<N>` bridges up on a node,
 * space-separated, ascending; `""` = none. Encoding sorts numerically and drops duplicates;
 * decoding refuses anything but decimal VNIs (no sign, no leading zero).
 */
export const vniList: Codec<number[]> = {
  format: 'a space-separated list of VNIs',
  encode: (v) => [...new Set(v)].sort((a, b) => a - b).map((n) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a VNI: ${n}`);
    return String(n);
  }).join(' '),
  decode: (raw, key) => spaceList.decode(raw, key).map((s) => {
    if (!/^(0|[1-9][0-9]*)$/.test(s) || !Number.isSafeInteger(Number(s))) throw new ZkDataError(key, raw, 'a space-separated list of VNIs');
    return Number(s);
  }).sort((a, b) => a - b),
};

/** JSON blobs (stats, health). Reading requires valid JSON; the shape is the caller's business. */
export const json: Codec<unknown> = {
  format: 'JSON',
  encode: (v) => JSON.stringify(v),
  decode: (raw, key) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new ZkDataError(key, raw, 'JSON');
    }
  },
};

/** A value from a fixed vocabulary (daemon/router/domain states, selectors…). */
export function oneOf<T extends string>(values: readonly T[]): Codec<T> {
  const format = `one of ${values.join('/')}`;
  return {
    format,
    encode: (v) => v,
    decode: (raw, key) => {
      if ((values as readonly string[]).includes(raw)) return raw as T;
      throw new ZkDataError(key, raw, format);
    },
  };
}

/**
 * A vocabulary the original lower-cases before writing (`migration_method`, `node_selector`):
 * reads any case and `None` as the lower-cased word, writes lower case.
 */
export function lowerOneOf<T extends string>(values: readonly T[]): Codec<T> {
  const inner = oneOf(values);
  return { format: inner.format, encode: (v) => v, decode: (raw, key) => inner.decode(raw.trim().toLowerCase(), key) };
}

/** `""` ⇄ null (`mtu`: empty = let the node fill in the maximum), anything else through `inner`. */
export function emptyOr<T>(inner: Codec<T>): Codec<T | null> {
  return {
    format: `empty or ${inner.format}`,
    encode: (v) => (v === null ? '' : inner.encode(v)),
    decode: (raw, key) => (raw === '' ? null : inner.decode(raw, key)),
  };
}

/** A node name or `none` (`/config/primary_node`); surrounding blanks are not part of it. */
export const nodeOrNone: Codec<string> = {
  format: 'a node name or none',
  encode: (v) => v,
  decode: (raw) => (raw.trim() === '' ? 'none' : raw.trim()),
};

const LOCAL_TIME_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * Local wall-clock time as the original's fault writer formats it (`YYYY-MM-DD HH:MM:SS`, no zone),
 * as epoch milliseconds in this process's time zone.
 */
export const localTime: Codec<number> = {
  format: 'a time "YYYY-MM-DD HH:MM:SS"',
  encode: (ms) => {
    const d = new Date(ms);
    const p = (n: number): string => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  },
  decode: (raw, key) => {
    const m = LOCAL_TIME_RE.exec(raw.trim());
    if (!m) throw new ZkDataError(key, raw, 'a time "YYYY-MM-DD HH:MM:SS"');
    const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
    const ms = new Date(y, mo - 1, d, h, mi, s).getTime();
    if (Number.isNaN(ms)) throw new ZkDataError(key, raw, 'a time "YYYY-MM-DD HH:MM:SS"');
    return ms;
  },
};

/** `staticdata`: `"<cpu_count> <kernel> <os> <arch>"`. */
export interface StaticData {
  cpuCount: number;
  kernel: string;
  os: string;
  arch: string;
}

/** Codec of a node's `staticdata` key. */
export const staticData: Codec<StaticData> = {
  format: '"<cpus> <kernel> <os> <arch>"',
  encode: (v) => [String(v.cpuCount), v.kernel, v.os, v.arch].join(' '),
  decode: (raw, key) => {
    const parts = raw.split(/\s+/).filter((s) => s !== '');
    const [cpus, kernel, os, arch] = parts;
    if (parts.length !== 4 || !INT_RE.test(cpus ?? '') || kernel === undefined || os === undefined || arch === undefined) {
      throw new ZkDataError(key, raw, '"<cpus> <kernel> <os> <arch>"');
    }
    return { cpuCount: Number(cpus), kernel, os, arch };
  },
};

/**
 * Python `str(value)` of a plain value, for callers with untyped data: null/undefined → `None`,
 * booleans → `True`/`False`, integral numbers → digits, other numbers → float repr.
 */
export function pyStr(value: string | number | boolean | bigint | null | undefined): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return bool.encode(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pythonFloat(value);
  return value;
}
