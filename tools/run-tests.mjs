#!/usr/bin/env node
// Runs one test tier with Node's built-in runner (TypeScript through tsx, workspace libs from source).
// Usage: node tools/run-tests.mjs <unit|sim|integration|cluster|all> [extra node --test flags]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const tiers = {
  unit: { dirs: ['libs', 'apps'], match: (f) => f.endsWith('.spec.ts') },
  sim: { dirs: ['tests/sim'], match: (f) => f.endsWith('.test.ts') },
  integration: { dirs: ['tests/integration'], match: (f) => f.endsWith('.test.ts') },
  cluster: { dirs: ['tests/cluster', 'tests/e2e'], match: (f) => f.endsWith('.test.ts') },
};

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

const [tier = 'unit', ...extra] = process.argv.slice(2);
const names = tier === 'all' ? Object.keys(tiers) : [tier];
let files = [];
for (const name of names) {
  const t = tiers[name];
  if (!t) {
    console.error(`unknown test tier "${name}"; expected one of: ${Object.keys(tiers).join(', ')}, all`);
    process.exit(2);
  }
  for (const d of t.dirs) files.push(...walk(join(root, d), []).filter(t.match));
}
files = files.map((f) => relative(root, f)).sort();
if (files.length === 0) {
  console.error(`no test files found for tier "${tier}"`);
  process.exit(1);
}
const concurrency = tier === 'unit' || tier === 'sim' ? [] : ['--test-concurrency=1'];
const r = spawnSync(
  process.execPath,
  ['--conditions=development', '--import', 'tsx', '--test', ...concurrency, ...extra, ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(r.status ?? 1);
