// `pvc cluster ...` against a real Zookeeper.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baseKeys, newDomainObject, paths } from '@pvc/zk';
import type { ClusterStatus } from '../../../apps/cli/src/ops/status.js';
import { CliRig, domainXml } from './support.js';

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
    const r = await rig.pvc(['cluster', 'status']);
    assert.equal(r.code, 3);
    assert.equal(r.stderr, `pvc: Zookeeper at ${rig.server.hostPort} holds no PVC cluster: run "pvc cluster init" first\n`);
  });

  it('refuses a tree of another schema version (exit 3)', async () => {
    await rig.ok('cluster', 'init');
    await rig.zk.set(paths.schema.version, '14');
    const r = await rig.pvc(['cluster', 'maintenance', 'on']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /schema version is "14"; this pvc speaks version 15/);
    assert.equal(await rig.zk.read(paths.config.maintenance), 'false');
  });
});

describe('pvc cluster status, maintenance, backup, restore', () => {
  let rig: CliRig;
  before(async () => {
    rig = await CliRig.start();
  });
  after(async () => rig.destroy());
  beforeEach(async () => rig.reset());

  const vm = async (uuid: string, name: string, state: string, node: string, failedreason = ''): Promise<void> => {
    const d = newDomainObject({ uuid, name, node, state, xml: domainXml(name, { uuid }) });
    await rig.zk.createObject(d.root, d.entries);
    if (failedreason) await rig.zk.set(paths.domain(uuid).failedReason, failedreason);
  };

  it('status counts nodes and VMs by state and derives the original\'s faults', async () => {
    await rig.addNode('hv1', { routerState: 'primary' });
    await rig.addNode('hv2');
    await rig.addNode('hv3', { daemonState: 'dead', domainState: 'flushed', health: 'None' });
    await rig.zk.set(paths.config.primaryNode, 'hv1');
    await vm('0de30000-0000-4000-8000-000000000001', 'web1', 'start', 'hv1');
    await vm('0de30000-0000-4000-8000-000000000002', 'web2', 'stop', 'hv2');
    await vm('0de30000-0000-4000-8000-000000000003', 'db1', 'fail', 'hv2', 'libvirt: no such file');
    const json = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.equal(json.primaryNode, 'hv1');
    assert.deepEqual(json.nodes.daemonStates, { dead: 1, run: 2 });
    assert.deepEqual(json.vms.states, { fail: 1, start: 1, stop: 1 });
    assert.deepEqual(json.faults.map((f) => [f.id, f.delta]), [['DEAD_NODE_HV3', 50], ['VM_FAILED_DB1', 10]]);
    assert.match(json.faults[1]?.message ?? '', /libvirt: no such file/);
    assert.equal(json.health, 40);
    const human = await rig.ok('cluster', 'status');
    assert.match(human, /Health: +40%/);
    assert.match(human, /VMs: +3: 1 fail, 1 start, 1 stop/);
    assert.match(human, /DEAD_NODE_HV3 +50 +live +Node hv3 was dead and\/or fenced/);
    assert.doesNotMatch(human, /\x1b\[/, 'no colour when not on a terminal');
    assert.doesNotMatch(human + JSON.stringify(json), /Secret-IPMI-pass/);
  });

  it('maintenance on silences live faults and shows in the status; acked stored faults do not count', async () => {
    await rig.addNode('hv1', { daemonState: 'fenced' });
    const f = paths.faults.fault('DEAD_NODE_HV1');
    await rig.zk.createObject(f.root, [['', ''], ['first_time', ''], ['last_time', ''], ['ack_time', ''], ['status', 'ack'], ['delta', '50'], ['message', 'Node hv1 was dead and/or fenced']]);
    let s = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.deepEqual(s.faults.map((x) => [x.id, x.source, x.status]), [['DEAD_NODE_HV1', 'stored', 'ack']]);
    assert.equal(s.health, 100);
    assert.match(await rig.ok('cluster', 'maintenance', 'on'), /Maintenance mode on/);
    assert.equal(await rig.zk.read(paths.config.maintenance), 'true');
    s = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.equal(s.maintenance, true);
    await rig.ok('cluster', 'maintenance', 'off');
    assert.equal(await rig.zk.read(paths.config.maintenance), 'false');
    const bad = await rig.pvc(['cluster', 'maintenance', 'maybe']);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'pvc: maintenance: expected on or off, got "maybe"\n');
  });

  it('colour only on a terminal, and never with NO_COLOR or --no-color', async () => {
    await rig.addNode('hv1');
    const esc = /\x1b\[/;
    const tty = await rig.pvc(['node', 'list'], { tty: true });
    assert.equal(tty.code, 0);
    assert.match(tty.stdout, esc, 'a terminal gets colours');
    assert.match(tty.stdout, /\x1b\[32mrun\x1b\[39m/, 'daemon state run in green');
    assert.doesNotMatch((await rig.pvc(['node', 'list'], { tty: true, env: rig.env({ NO_COLOR: '1' }) })).stdout, esc);
    assert.doesNotMatch((await rig.pvc(['--no-color', 'node', 'list'], { tty: true })).stdout, esc);
    assert.doesNotMatch((await rig.pvc(['node', 'list'])).stdout, esc, 'a pipe gets plain text');
  });

  it('status survives bad data in ZK and reports it', async () => {
    await rig.addNode('hv1');
    await rig.zk.set(paths.node('hv1').memTotal, 'lots');
    await vm('0de30000-0000-4000-8000-000000000001', 'web1', 'start', 'hv1');
    await rig.zk.set(paths.domain('0de30000-0000-4000-8000-000000000001').xml, '<not-xml');
    const s = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.equal(s.vms.total, 1);
    assert.match(s.nodes.list[0]?.problems.join() ?? '', /bad value at \/nodes\/hv1\/memtotal/);
  });

  it('backup then restore into an empty Zookeeper gives the same tree, without lock contenders', async () => {
    await rig.addNode('hv1');
    await vm('0de30000-0000-4000-8000-000000000001', 'web1', 'start', 'hv1');
    await rig.zk.create(`${paths.domain('0de30000-0000-4000-8000-000000000001').state}/abc__lock__`, 'x', { ephemeral: true, sequential: true });
    const file = join(rig.dir, 'backup.json');
    assert.match(await rig.ok('cluster', 'backup', '--file', file), /Wrote \d+ keys/);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const backup = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
    assert.equal(backup[paths.domain('0de30000-0000-4000-8000-000000000001').root], 'web1');
    assert.equal(Object.keys(backup).some((k) => k.includes('__lock__') || k.startsWith('/zookeeper')), false);
    const stdout = JSON.parse(await rig.ok('cluster', 'backup')) as Record<string, string>;
    assert.deepEqual(Object.keys(stdout).sort(), Object.keys(backup).sort());

    for (const child of await rig.zk.children('/')) if (child !== 'zookeeper') await rig.zk.delete(`/${child}`);
    const noYes = await rig.pvc(['cluster', 'restore', file]);
    assert.equal(noYes.code, 2);
    assert.match(noYes.stderr, /add --yes to confirm/);
    assert.equal(await rig.zk.exists('/schema'), undefined);
    assert.match(await rig.ok('cluster', 'restore', file, '--yes'), new RegExp(`Restored ${Object.keys(backup).length} keys`));
    assert.deepEqual(JSON.parse(await rig.ok('cluster', 'backup')), backup);
  });

  it('restore refuses files that are not PVC backups of this schema, writing nothing', async () => {
    const write = async (name: string, text: string): Promise<string> => {
      const p = join(rig.dir, name);
      await writeFile(p, text);
      return p;
    };
    const before = await rig.ok('cluster', 'backup');
    const cases: [string, string, number, RegExp][] = [
      ['a.json', '{not json', 2, /a\.json: not JSON/],
      ['b.json', '[1,2]', 2, /b\.json: not a PVC backup/],
      ['c.json', '{"/schema/version":"15","relative":"x"}', 2, /"relative" is not an absolute Zookeeper path/],
      ['d.json', '{"/schema/version":"14"}', 1, /d\.json is of schema version 14; this cluster speaks 15/],
      ['e.json', '{"/zookeeper/quota":"x","/schema/version":"15"}', 2, /\/zookeeper\/quota is not PVC data/],
    ];
    for (const [name, text, code, re] of cases) {
      const r = await rig.pvc(['cluster', 'restore', await write(name, text), '--yes']);
      assert.equal(r.code, code, `${name}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.split('\n').length, 2, 'one line');
    }
    const missing = await rig.pvc(['cluster', 'restore', join(rig.dir, 'nope.json'), '--yes']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*nope\.json/);
    assert.equal(await rig.ok('cluster', 'backup'), before);
  });
});
