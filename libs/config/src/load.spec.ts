import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '@pvc/runtime';
import { ConfigError } from './errors.js';
import { DEFAULT_CONFIG_PATH, loadConfig, resolveConfigPath } from './load.js';
import { SAMPLE_PATH, sampleText } from './testing/sample.js';

const withDir = (fn: (dir: string) => Promise<void>): Promise<void> => withTempDir('pvc-config-', fn);

test('path precedence: explicit path, then --config, then PVCD_CONFIG_FILE, then the default', () => {
  const env = { PVCD_CONFIG_FILE: '/env.yaml' };
  const argv = ['--config', '/argv.yaml'];
  assert.equal(resolveConfigPath({ path: '/explicit.yaml', argv, env }), '/explicit.yaml');
  assert.equal(resolveConfigPath({ argv, env }), '/argv.yaml');
  assert.equal(resolveConfigPath({ argv: ['--config=/eq.yaml'], env }), '/eq.yaml');
  assert.equal(resolveConfigPath({ argv: ['--check-config'], env }), '/env.yaml');
  assert.equal(resolveConfigPath({ argv: [], env: { PVCD_CONFIG_FILE: '' } }), DEFAULT_CONFIG_PATH);
  assert.equal(resolveConfigPath(), '/etc/pvc/pvcnoded.yaml');
});

test('--config without a value is a usage problem', () => {
  for (const argv of [['--config'], ['--config', '--check-config'], ['--config=']]) {
    assert.throws(
      () => resolveConfigPath({ argv }),
      (err: unknown) =>
        err instanceof ConfigError && err.code === 'CONFIG_UNREADABLE' && err.message === '--config: expected a file path, got nothing',
    );
  }
});

test('loads the sample via --config, PVCD_CONFIG_FILE and an explicit path', async () => {
  const viaArgv = await loadConfig({ argv: ['--config', SAMPLE_PATH], env: { PVCD_CONFIG_FILE: '/nonexistent.yaml' } });
  assert.equal(viaArgv.source, SAMPLE_PATH);
  assert.equal(viaArgv.node, 'pvchv1');
  const viaEnv = await loadConfig({ argv: [], env: { PVCD_CONFIG_FILE: SAMPLE_PATH } });
  assert.equal(viaEnv.source, SAMPLE_PATH);
  const viaPath = await loadConfig({ path: SAMPLE_PATH, argv: ['--config', '/nonexistent.yaml'] });
  assert.equal(viaPath.zkConnectString, 'pvchv1:2181,pvchv2:2181,pvchv3:2181');
});

test('the env file is read when argv names none', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'node4.yaml');
    await writeFile(file, sampleText().replace('node: pvchv1', 'node: pvchv4'));
    const config = await loadConfig({ argv: ['--check-config'], env: { PVCD_CONFIG_FILE: file } });
    assert.equal(config.node, 'pvchv4');
    assert.equal(config.mode, 'hypervisor');
  });
});

test('a missing file is CONFIG_UNREADABLE with a one-line message', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'absent.yaml');
    await assert.rejects(loadConfig({ path: file }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'CONFIG_UNREADABLE');
      assert.equal(err.message, `${file}: cannot read file: it does not exist`);
      return true;
    });
  });
});

test('a directory is CONFIG_UNREADABLE', async () => {
  await withDir(async (dir) => {
    await assert.rejects(
      loadConfig({ path: dir }),
      (err: unknown) => err instanceof ConfigError && err.message === `${dir}: cannot read file: it is a directory`,
    );
  });
});

test('a YAML syntax error is CONFIG_UNREADABLE with file, line and column on one line', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'broken.yaml');
    await writeFile(file, 'pvc:\n  node: pvchv1\n    debug: False\n');
    await assert.rejects(loadConfig({ path: file }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'CONFIG_UNREADABLE');
      assert.equal(err.message, `${file}: YAML syntax error at line 3, column 10: bad indentation of a mapping entry`);
      assert.ok(!err.message.includes('\n'));
      return true;
    });
  });
});

test('a duplicated key is a YAML error rather than a silent override', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'dup.yaml');
    await writeFile(file, sampleText().replace('  debug: False\n', '  debug: False\n  debug: True\n'));
    await assert.rejects(loadConfig({ path: file }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'CONFIG_UNREADABLE');
      assert.match(err.message, /: YAML syntax error at line \d+, column \d+: duplicated mapping key$/);
      return true;
    });
  });
});

test('an invalid file is CONFIG_INVALID naming the file as source', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, sampleText().replace('target_selector: mem', 'target_selector: fastest'));
    await assert.rejects(loadConfig({ path: file }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.equal(err.source, file);
      assert.equal(err.message, 'pvc.system.migration.target_selector: expected one of mem, memprov, vcpus, load, vms, got "fastest"');
      return true;
    });
  });
});
