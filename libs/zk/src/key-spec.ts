import type { Codec } from './codec.js';
import type { WritePair } from './types.js';

/**
 * One schema key with the one codec every reader and writer uses for it.
 *
 * - `codec`: the original's encoding (Python `str()` of the value).
 * - `fallback`: what the key means when it is absent, empty where the codec takes no `""`, or holds
 *   a value the codec does not accept — the original's default for it. `undefined` for a state
 *   whose meaning is "unknown" (callers then refuse to act on it).
 * - `fill`: the text the original's schema validation creates a missing key with: `""`, except
 *   `migration_max_downtime` (`300`), a pool's `tier` (`default`) and an OSD's `is_split` (`False`).
 */
export interface KeySpec<T, F = T> {
  readonly path: string;
  readonly codec: Codec<T>;
  readonly fallback: F;
  readonly fill: string;
}

/** The decoded type of a key. */
export type KeyValue<S> = S extends KeySpec<infer T, infer F> ? T | F : never;

/** Builds a {@link KeySpec} (for the key tables of this package). */
export function keySpec<T, F = T>(path: string, codec: Codec<T>, fallback: F, fill = ''): KeySpec<T, F> {
  return { path, codec, fallback, fill };
}

/** Encodes one pair for `ZkClient.write` through the key's codec. */
export function pair<T>(spec: KeySpec<T, unknown>, value: T): WritePair {
  return [spec.path, spec.codec.encode(value)];
}
