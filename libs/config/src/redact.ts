/**
 * Printable copies of a configuration.
 *
 * @module
 */
import { SECRET_KEYS } from './problems.js';
import type { Config } from './types.js';

/** What a secret value is replaced with. */
export const REDACTED = '[redacted]';

function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEYS.has(key) ? REDACTED : redactValue(v);
  return out;
}

/**
 * A mutable deep copy of `config` with every password (`system.fencing.ipmi.pass`, and the
 * `pass` of both coordinator databases) replaced by `"[redacted]"`. Use it whenever a config is
 * printed or logged; the original is not touched.
 */
export function redactedConfig(config: Config): Config {
  return redactValue(config) as Config;
}
