/**
 * Finds and imports plugin files. One bad file (fails to import, no `run`, bad or duplicate name)
 * is reported and skipped; the others still load.
 *
 * @module
 */
import { readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describeError } from '@pvc/runtime';
import type { HealthPlugin } from './types.js';

/** Extensions loaded by default. Tests running under tsx add `.ts`. */
export const DEFAULT_PLUGIN_EXTENSIONS: readonly string[] = ['.js', '.mjs'];

/** A plugin name: letters, digits, `_` and `-` (it becomes a ZK key). */
export const PLUGIN_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** A plugin that imported and passed the shape checks. */
export interface LoadedPlugin {
  name: string;
  /** Absolute file path. */
  file: string;
  plugin: HealthPlugin;
}

/** A file that was skipped, and why. */
export interface LoadProblem {
  file: string;
  reason: string;
}

/** Whether a directory entry is a candidate plugin file (tests, maps, declarations, `_x`/`.x` are not). */
export function isPluginFile(entry: string, extensions: readonly string[]): boolean {
  if (entry.startsWith('_') || entry.startsWith('.')) return false;
  if (/\.(spec|test)\.[cm]?[jt]s$/.test(entry) || entry.endsWith('.d.ts') || entry.endsWith('.map')) return false;
  return extensions.includes(extname(entry));
}

/** Checks a module's default export; returns the plugin or the reason it is unusable. */
export function checkPluginExport(mod: unknown): HealthPlugin | string {
  const def = (mod as { default?: unknown } | null)?.default;
  if (def === null || typeof def !== 'object') return 'no default export object';
  const p = def as Record<string, unknown>;
  if (typeof p['name'] !== 'string' || !PLUGIN_NAME_RE.test(p['name'])) {
    return `bad or missing name ${JSON.stringify(p['name'])} (letters, digits, _ and - only)`;
  }
  if (typeof p['run'] !== 'function') return `plugin "${p['name']}" has no run() function`;
  for (const hook of ['setup', 'cleanup']) {
    if (p[hook] !== undefined && typeof p[hook] !== 'function') return `plugin "${p['name']}": ${hook} is not a function`;
  }
  return def as HealthPlugin;
}

/**
 * Imports every plugin file of `dir`, sorted by file name. A missing or unreadable directory loads
 * nothing and is reported as one problem.
 */
export async function loadPluginFiles(
  dir: string,
  extensions: readonly string[] = DEFAULT_PLUGIN_EXTENSIONS,
): Promise<{ plugins: LoadedPlugin[]; problems: LoadProblem[] }> {
  let entries: string[];
  try {
    entries = (await readdir(dir)).filter((e) => isPluginFile(e, extensions)).sort();
  } catch (err) {
    return { plugins: [], problems: [{ file: dir, reason: `cannot read plugin directory: ${describeError(err)}` }] };
  }
  const plugins: LoadedPlugin[] = [];
  const problems: LoadProblem[] = [];
  for (const entry of entries) {
    const file = join(dir, entry);
    let mod: unknown;
    try {
      mod = await import(pathToFileURL(file).href);
    } catch (err) {
      problems.push({ file, reason: `import failed: ${describeError(err)}` });
      continue;
    }
    const checked = checkPluginExport(mod);
    if (typeof checked === 'string') {
      problems.push({ file, reason: checked });
      continue;
    }
    const clash = plugins.find((p) => p.name === checked.name);
    if (clash) {
      problems.push({ file, reason: `plugin name "${checked.name}" is already used by ${clash.file}` });
      continue;
    }
    plugins.push({ name: checked.name, file, plugin: checked });
  }
  return { plugins, problems };
}
