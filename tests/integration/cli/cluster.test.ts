// `pvc cluster ...` against a real Zookeeper.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { baseKeys, paths } from '@pvc/zk';
import { CliRig } from './support.js';

describe('pvc cluster init', () => {
  let rig: CliRig;
  before(async () => {
    rig = await CliRig.start();
  });
  after(async () => rig.destroy());
  beforeEach(async () => {
    for (const child of await rig.zk.children('/')) if (child !== 'zookeeper') await rig.zk.delete(`/${child}`);
  });

  it('creates every base key of schema v15 with its initial value', async () => {
    const out = await rig.ok('cluster', 'init', '--name', 'lab', '--selector', 'vcpus');
    assert.match(out, /Initialised a PVC cluster \(schema version 15, 21 keys\)/);
    for (const key of baseKeys()) assert.notEqual(await rig.zk.exists(key), undefined, key);
    assert.equal(await rig.zk.read(paths.schema.version), '15');
    assert.equal(await rig.zk.read(paths.config.root), 'lab');
    assert.equal(await rig.zk.read(paths.config.maintenance), 'false');
    assert.equal(await rig.zk.read(paths.config.primaryNode), 'none');
    assert.equal(await rig.zk.read(paths.config.migrationTargetSelector), 'vcpus');
  });

  it('refuses an initialised cluster, and --overwrite without --yes; wipes with both', async () => {
    await rig.ok('cluster', 'init');
    await rig.zk.create(paths.domain('0de30000-0000-4000-8000-00000000aaaa').root, 'keepme');
    const again = await rig.pvc(['cluster', 'init']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^pvc: the cluster is already initialised \(schema version 15\); "pvc cluster init --overwrite --yes" wipes it\n$/);
    const noYes = await rig.pvc(['cluster', 'init', '--overwrite']);
    assert.equal(noYes.code, 2);
    assert.match(noYes.stderr, /add --yes to confirm/);
    assert.equal(await rig.zk.read(paths.domain('0de30000-0000-4000-8000-00000000aaaa').root), 'keepme');
    await rig.ok('cluster', 'init', '--overwrite', '--yes');
    assert.deepEqual(await rig.zk.children(paths.domains), []);
    assert.ok((await rig.zk.children('/')).includes('zookeeper'));
  });

  it('refuses an unknown selector without writing anything', async () => {
    const r = await rig.pvc(['cluster', 'init', '--selector', 'fastest']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--selector: "fastest" is not one of mem, memprov, vcpus, load, vms/);
    assert.equal(await rig.zk.exists('/schema'), undefined);
  });

  it('other commands on an uninitialised Zookeeper say to run init (exit 3)', async () => {
    const r = await rig.pvc(['vm', 'list']);
    assert.equal(r.code === 3 || r.code === 2, true, r.stderr);
  });
});
