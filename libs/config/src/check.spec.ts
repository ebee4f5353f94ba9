import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '@pvc/runtime';
import { checkConfigMain, wantsCheckConfig } from './check.js';
import { SAMPLE_PATH, sampleText } from './testing/sample.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    sinks: { out: { write: (s: string) => out.push(s) }, err: { write: (s: string) => err.push(s) } },
  };
}

test('wantsCheckConfig finds the flag anywhere in argv', () => {
  assert.equal(wantsCheckConfig(['--config', '/x.yaml', '--check-config']), true);
  assert.equal(wantsCheckConfig(['--config', '/x.yaml']), false);
});

test('a valid config prints one OK line and returns 0', async () => {
  const c = capture();
  const code = await checkConfigMain(['--check-config', '--config', SAMPLE_PATH], {}, c.sinks);
  assert.equal(code, 0);
  assert.deepEqual(c.out, [`config OK: ${SAMPLE_PATH} (node pvchv1, coordinator)\n`]);
  assert.deepEqual(c.err, []);
});

test('a hypervisor node is named as such; PVCD_CONFIG_FILE is honoured', async () => {
  await withTempDir('pvc-check-', async (dir) => {
    const file = join(dir, 'hv.yaml');
    await writeFile(file, sampleText().replace('node: pvchv1', 'node: pvchv5'));
    const c = capture();
    assert.equal(await checkConfigMain(['--check-config'], { PVCD_CONFIG_FILE: file }, c.sinks), 0);
    assert.deepEqual(c.out, [`config OK: ${file} (node pvchv5, hypervisor)\n`]);
  });
});

test('an invalid config prints every problem to err, never a password or stack, and returns 2', async () => {
  await withTempDir('pvc-check-', async (dir) => {
    const file = join(dir, 'bad.yaml');
    const text = sampleText()
      .replace('pass: Passw0rd', 'pass: 31337')
      .replace('fence_intervals: 6', 'fence_intervals: six')
      .replace('node: pvchv1', 'node: pvc.hv1');
    await writeFile(file, text);
    const c = capture();
    assert.equal(await checkConfigMain(['--check-config', `--config=${file}`], {}, c.sinks), 2);
    assert.deepEqual(c.out, []);
    assert.deepEqual(c.err.join('').split('\n'), [
      `config INVALID: ${file} (3 problems)`,
      'pvc.node: expected a short hostname (letters, digits and hyphens, no dots), got "pvc.hv1"',
      'pvc.system.fencing.intervals.fence_intervals: expected an integer ≥ 0, got "six"',
      'pvc.system.fencing.ipmi.pass: expected a non-empty string, got a number (redacted)',
      '',
    ]);
    assert.ok(!c.err.join('').includes('31337'));
    assert.ok(!c.err.join('').includes('    at '));
  });
});

test('a missing file is reported on err with exit code 2', async () => {
  const c = capture();
  assert.equal(await checkConfigMain([], { PVCD_CONFIG_FILE: '/nonexistent/pvcnoded.yaml' }, c.sinks), 2);
  assert.equal(
    c.err.join(''),
    'config INVALID: /nonexistent/pvcnoded.yaml (1 problem)\n/nonexistent/pvcnoded.yaml: cannot read file: it does not exist\n',
  );
});
