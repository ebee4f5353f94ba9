/**
 * Parses a raw `node_limit` value (comma-separated node names, `""` for none): entries are trimmed,
 * empty ones dropped, duplicates removed, first-seen order kept. An empty result means no limit.
 */
export function parseNodeLimit(raw: string | null | undefined): string[] {
  if (raw === null || raw === undefined) return [];
  const out: string[] = [];
  for (const part of raw.split(',')) {
    const name = part.trim();
    if (name !== '' && !out.includes(name)) out.push(name);
  }
  return out;
}

/** A VM's node limit checked against the known nodes. */
export interface ResolvedLimit {
  /** The allowed names, or null when the VM has no limit. */
  readonly allowed: ReadonlySet<string> | null;
  /** Limit entries naming no known node, sorted. */
  readonly unknown: readonly string[];
}

/**
 * Splits `limit` into the allowed set and the names no known node has. Entries are trimmed and
 * blank ones ignored; an empty (or all-blank) limit means every node is allowed.
 */
export function resolveLimit(limit: readonly string[] | undefined, knownNodes: readonly string[]): ResolvedLimit {
  const names = (limit ?? []).map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) return { allowed: null, unknown: [] };
  const known = new Set(knownNodes);
  const unknown = [...new Set(names.filter((n) => !known.has(n)))].sort(byName);
  return { allowed: new Set(names), unknown };
}

/** Code-unit order of names (deterministic, locale-independent). */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
