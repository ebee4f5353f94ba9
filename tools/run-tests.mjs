#!/usr/bin/env node
// Runs one test tier with Node's built-in runner (TypeScript through tsx, workspace libs from source).
// Usage: node tools/run-tests.mjs <unit|sim|integration|cluster|packaging|all> [extra node --test flags]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
// `limitMin`: a bound on the whole tier (a file whose handles keep it alive after its tests would
// otherwise hold CI until its 90 minutes run out, with no closing line). Normal runs take 2-3, 3, 6,
// 12-15 and 1-2 minutes here.
const tiers = {
  unit: { dirs: ['libs', 'apps'], match: (f) => f.endsWith('.spec.ts'), limitMin: 15 },
  sim: { dirs: ['tests/sim'], match: (f) => f.endsWith('.test.ts'), limitMin: 15 },
  integration: { dirs: ['tests/integration'], match: (f) => f.endsWith('.test.ts'), limitMin: 30 },
  cluster: { dirs: ['tests/cluster', 'tests/e2e'], match: (f) => f.endsWith('.test.ts'), limitMin: 40 },
  // The Debian packages in a container running a real systemd (builds them first): ~1-2 minutes.
  packaging: { dirs: ['tests/packaging'], match: (f) => f.endsWith('.test.ts'), limitMin: 10 },
};

/** Runs the tier's runner in its own process group; kills the whole group past the limit. */
function runBounded(args, limitMin) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: root, detached: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, limitMin * 60_000);
    const stop = (sig) => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      process.exit(sig === 'SIGINT' ? 130 : 143);
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      clearTimeout(timer);
      resolve({ status: code ?? 1, signal, timedOut });
    });
  });
}

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

function filesOf(name) {
  const t = tiers[name];
  if (!t) {
    console.error(`unknown test tier "${name}"; expected one of: ${Object.keys(tiers).join(', ')}, all`);
    process.exit(2);
  }
  const files = [];
  for (const d of t.dirs) files.push(...walk(join(root, d), []).filter(t.match));
  return files.map((f) => relative(root, f)).sort();
}

/** Runs one tier; the spec reporter goes to the terminal, TAP to a file whose summary we add up. */
async function runTier(name, extra) {
  const files = filesOf(name);
  if (files.length === 0) {
    // An empty tier is reported, not failed: tiers fill up issue by issue (sim comes with keepaliled).
    console.log(`\n=== ${name} tests: no test files yet ===`);
    return { pass: 0, fail: 0, skipped: 0, status: 0 };
  }
  const tap = join(mkdtempSync(join(tmpdir(), 'pvc-tests-')), `${name}.tap`);
  const concurrency = name === 'unit' || name === 'sim' ? [] : ['--test-concurrency=1'];
  console.log(`\n=== ${name} tests (${files.length} files) ===`);
  const r = await runBounded(
    [
      '--conditions=development', '--import', 'tsx', '--test', ...concurrency,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${tap}`,
      ...extra, ...files,
    ],
    tiers[name].limitMin,
  );
  if (r.timedOut) console.log(`\n${name}: stopped after ${tiers[name].limitMin} minutes (the tier's bound): a test file hung`);
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  const count = (k) => Number((text.match(new RegExp(`^# ${k} (\\d+)$`, 'm')) ?? [])[1] ?? 0);
  const result = { pass: count('pass'), fail: count('fail'), skipped: count('skipped'), status: r.timedOut ? 1 : r.status };
  if (result.status !== 0 && result.fail === 0) result.fail = 1; // the runner itself failed
  console.log(`${name}: ${result.pass} passed, ${result.fail} failed, ${result.skipped} skipped`);
  return result;
}

const [tier = 'unit', ...extra] = process.argv.slice(2);
const names = tier === 'all' ? Object.keys(tiers) : tier.split(',');
const total = { pass: 0, fail: 0, skipped: 0, status: 0 };
for (const name of names) {
  const r = await runTier(name, extra);
  total.pass += r.pass;
  total.fail += r.fail;
  total.skipped += r.skipped;
  if (r.status !== 0) total.status = 1;
}
if (names.length > 1) console.log(`\ntests: ${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped`);
process.exit(total.status);
