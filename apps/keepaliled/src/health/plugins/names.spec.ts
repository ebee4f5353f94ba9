import assert from 'node:assert/strict';
import { basename, extname } from 'node:path';
import { test } from 'node:test';
import { BUILTIN_PLUGIN_DIR } from '../details.js';
import { loadPluginFiles } from '../loader.js';

/** The original's plugin names (pvc-inventory §9) that we ship, plus our `pvcs`. */
const SHIPPED = ['disk', 'dpkg', 'ipmi', 'lbvt', 'load', 'nics', 'pvcs', 'zkpr'];

test('the shipped plugins carry the original\'s names (part of fault IDs and monitoring_plugins), each in a file of that name', async () => {
  const { plugins, problems } = await loadPluginFiles(BUILTIN_PLUGIN_DIR, ['.ts']);
  assert.deepEqual(problems, []);
  assert.deepEqual(plugins.map((p) => p.name), SHIPPED);
  for (const p of plugins) assert.equal(basename(p.file, extname(p.file)), p.name, p.file);
});
