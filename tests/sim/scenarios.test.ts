/**
 * Scenario tests: each folder under tests/sim/scenarios holds cluster.yaml, events.txt and the
 * expected deterministic event log. A run must reproduce the log exactly and keep every invariant.
 * Regenerate a log (a reviewed change) with `PVC_SIM_UPDATE=1`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScenario } from './framework/scenario.js';
import { SimCluster } from './framework/sim-cluster.js';

const ROOT = fileURLToPath(new URL('./scenarios', import.meta.url));

for (const name of readdirSync(ROOT).sort()) {
  test(`scenario ${name}`, async () => {
    const dir = join(ROOT, name);
    const { cluster, events, expected } = await loadScenario(dir);
    const sim = new SimCluster(cluster);
    await sim.setUp();
    await sim.run(events);
    await sim.tearDown();
    const log = sim.lines.join('\n') + '\n';
    if (process.env.PVC_SIM_UPDATE === '1' || expected === undefined) await writeFile(join(dir, 'expected.log'), log);
    assert.deepEqual(sim.invariants.violations, [], `invariants broken in ${name}`);
    assert.ok(expected !== undefined, `${name}: no expected.log yet; one was written — review and commit it`);
    assert.equal(log, expected, `${name}: event log differs from expected.log`);
  });
}
