/**
 * Test fixtures: the repository's sample `pvcnoded.yaml` and a helper to derive broken variants.
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, dump, load } from 'js-yaml';

/** Absolute path of `deploy/config/pvcnoded.sample.yaml`. */
export const SAMPLE_PATH = fileURLToPath(new URL('../../../../deploy/config/pvcnoded.sample.yaml', import.meta.url));

/** The sample file's text. */
export function sampleText(): string {
  return readFileSync(SAMPLE_PATH, 'utf8');
}

/** A fresh, mutable copy of the sample document. */
export function sampleDoc(): Record<string, unknown> {
  return load(sampleText(), { schema: CORE_SCHEMA }) as Record<string, unknown>;
}

/** Marks a key for removal in {@link mutate}. */
export const DELETE = Symbol('delete');

/** A change to a document: a dotted path (list items as `.0`) and a new value or {@link DELETE}. */
export type Edit = readonly [path: string, value: unknown];

/** The sample document with the given edits applied in order. */
export function mutate(...edits: readonly Edit[]): Record<string, unknown> {
  const doc = sampleDoc();
  for (const [path, value] of edits) {
    const keys = path.split('.');
    const last = keys.pop() as string;
    let cur = doc as Record<string, unknown>;
    for (const k of keys) {
      if (cur[k] === undefined || cur[k] === null || typeof cur[k] !== 'object') cur[k] = {};
      cur = cur[k] as Record<string, unknown>;
    }
    if (value === DELETE) delete cur[last];
    else cur[last] = value;
  }
  return doc;
}

/**
 * Writes the sample with `edits` applied as `<dir>/pvcnoded.yaml` and returns its path: a config
 * file for service tests (point `pvc.system.configuration.directories.*` into `dir`).
 */
export function writeTestConfig(dir: string, ...edits: readonly Edit[]): string {
  const path = join(dir, 'pvcnoded.yaml');
  writeFileSync(path, dump(mutate(...edits)), { mode: 0o600 });
  return path;
}
