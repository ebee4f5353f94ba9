/**
 * The double-run watch itself: the same guest (same UUID) started by hand on two hosts must be
 * reported as a confirmed double run — so the invariant checks of the other cluster tests can fail.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCluster, missingPrerequisites, waitFor, type Cluster } from './harness/index.js';
import { DoubleRunWatch } from './cluster-watch.js';

describe('DoubleRunWatch [root only]', () => {
  let cluster: Cluster | undefined;
  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    cluster = await createCluster({ name: 'dwat', hosts: 2, coordinators: 1 });
  });
  after(async () => {
    await cluster?.destroy();
  });

  it('a guest running on two hosts is a confirmed violation', async () => {
    const c = cluster!;
    const uuid = 'dddd0000-0000-4000-8000-000000000001';
    const xml = join(c.workDir, 'twice.xml');
    writeFileSync(xml, c.guest.domainXml('twice', { uuid, memoryMiB: 96 }));
    const watch = new DoubleRunWatch(c.hosts, 200);
    watch.start();
    try {
      for (const h of c.hosts) assert.equal((await h.virsh(['create', xml])).exitCode, 0, `virsh create on ${h.name}`);
      await waitFor('a confirmed double run', 20_000, async () => (watch.violations.length > 0 ? true : undefined), 100);
    } finally {
      await watch.stop();
      for (const h of c.hosts) await h.virsh(['destroy', uuid]);
    }
    assert.match(watch.violations[0] ?? '', new RegExp(`${uuid} runs on hv1 and hv2`));
  });
});
