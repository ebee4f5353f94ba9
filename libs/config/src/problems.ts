/**
 * Turns zod issues into {@link ConfigProblem}s: dotted key paths from the document root, our
 * "expected …, got …" wording, one problem per unknown key, and secrets kept out of messages.
 *
 * @module
 */
import type { z } from 'zod';
import type { ConfigProblem } from './errors.js';

type Segment = PropertyKey;

/** Keys that are secret wherever they appear: their values never reach a message. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['pass']);

/** Keys whose documented prose location differs from the authoritative example layout. */
const MOVED_KEYS: Readonly<Record<string, string>> = {
  'pvc.system.intervals': 'pvc.system.fencing.intervals',
};

/** Formats a path as `pvc.cluster.coordinators[1]`; the empty path is `(document)`. */
export function formatPath(path: readonly Segment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out === '' ? '(document)' : out;
}

/** The raw value at a path, or undefined when any step is missing. */
export function valueAt(root: unknown, path: readonly Segment[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

const MAX_VALUE_CHARS = 80;

/**
 * Renders a raw value for a problem message: `nothing` when missing, otherwise JSON (cut to
 * {@link MAX_VALUE_CHARS}), with secret values replaced so a password never appears.
 */
export function describeValue(value: unknown, secret = false): string {
  if (value === undefined) return 'nothing';
  if (secret && value !== null && value !== '') return `a ${Array.isArray(value) ? 'list' : typeof value} (redacted)`;
  const json =
    JSON.stringify(value, (key, v: unknown) => {
      if (SECRET_KEYS.has(key) && v !== undefined) return '[redacted]';
      if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
      return v;
    }) ?? String(value);
  return json.length > MAX_VALUE_CHARS ? `${json.slice(0, MAX_VALUE_CHARS - 3)}...` : json;
}

/** Builds the standard problem `<path>: expected <what>, got <value>` for a raw document. */
export function expectedProblem(raw: unknown, path: readonly Segment[], expected: string): ConfigProblem {
  const last = path[path.length - 1];
  const secret = typeof last === 'string' && SECRET_KEYS.has(last);
  return { path: formatPath(path), message: `expected ${expected}, got ${describeValue(valueAt(raw, path), secret)}` };
}

interface DefLike {
  type?: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
}

/** The keys a mapping schema accepts at a path, walking through optional/default/array wrappers. */
function knownKeysAt(schema: z.ZodType, path: readonly Segment[]): string[] {
  let node: z.ZodType | undefined = schema;
  const rest = [...path];
  while (node) {
    const def = node._zod.def as DefLike;
    if (def.innerType) node = def.innerType;
    else if (def.type === 'pipe') node = def.in;
    else if (def.type === 'array' && typeof rest[0] === 'number') {
      rest.shift();
      node = def.element;
    } else if (def.shape) {
      if (rest.length === 0) return Object.keys(def.shape);
      node = def.shape[String(rest.shift())];
    } else return [];
  }
  return [];
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, sub));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** `unknown key`, with a hint when the key was moved or looks like a misspelling of a known key. */
function unknownKeyMessage(fullPath: string, key: string, known: readonly string[]): string {
  const moved = MOVED_KEYS[fullPath];
  if (moved !== undefined) return `unknown key (did you mean ${moved}?)`;
  const near = known.filter((k) => editDistance(k, key) <= Math.min(2, Math.floor(k.length / 3)));
  return near.length === 1 ? `unknown key (did you mean ${near[0]}?)` : 'unknown key';
}

/** Converts every zod issue into problems, in the order zod reported them. */
export function problemsFromIssues(
  schema: z.ZodType,
  raw: unknown,
  issues: readonly z.core.$ZodIssue[],
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const full = formatPath([...issue.path, key]);
        out.push({ path: full, message: unknownKeyMessage(full, key, known) });
      }
    } else {
      out.push(expectedProblem(raw, issue.path, issue.message));
    }
  }
  return out;
}
