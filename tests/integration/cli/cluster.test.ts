// `pvc cluster ...` against a real Zookeeper.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baseKeys, codec, newDomainObject, paths } from '@pvc/zk';
import type { Fault } from '../../../apps/cli/src/ops/faults.js';
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

describe('pvc cluster status, fault, maintenance, backup, restore', () => {
  let rig: CliRig;
  before(async () => {
    rig = await CliRig.start();
  });
  after(async () => rig.destroy());
  beforeEach(async () => rig.reset());

  /** A fault as the original's health daemon (and keepaliled) stores it. */
  const storeFault = async (id: string, o: { delta?: string; first?: string; last?: string; ack?: string; status?: string; message?: string } = {}): Promise<void> => {
    const last = o.last ?? '2026-01-02 08:00:00';
    await rig.zk.createObject(paths.faults.fault(id).root, [
      ['', ''], ['first_time', o.first ?? last], ['last_time', last], ['ack_time', o.ack ?? ''], ['status', o.status ?? 'new'],
      ['delta', o.delta ?? '10'], ['message', o.message ?? `${id} message`],
    ]);
  };

  const vm = async (uuid: string, name: string, state: string, node: string, failedreason = ''): Promise<void> => {
    const d = newDomainObject({ uuid, name, node, state, xml: domainXml(name, { uuid }) });
    await rig.zk.createObject(d.root, d.entries);
    if (failedreason) await rig.zk.set(paths.domain(uuid).failedReason, failedreason);
  };

  it('status counts nodes and VMs by state; health and faults are the stored faults (none evaluated live)', async () => {
    await rig.addNode('hv1', { routerState: 'primary' });
    await rig.addNode('hv2');
    await rig.addNode('hv3', { daemonState: 'dead', domainState: 'flushed', health: 'None' });
    await rig.zk.set(paths.config.primaryNode, 'hv1');
    await vm('0de30000-0000-4000-8000-000000000001', 'web1', 'start', 'hv1');
    await vm('0de30000-0000-4000-8000-000000000002', 'web2', 'stop', 'hv2');
    await vm('0de30000-0000-4000-8000-000000000003', 'db1', 'fail', 'hv2', 'libvirt: no such file');
    let json = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.equal(json.primaryNode, 'hv1');
    assert.deepEqual(json.nodes.daemonStates, { dead: 1, run: 2 });
    assert.deepEqual(json.vms.states, { fail: 1, start: 1, stop: 1 });
    assert.deepEqual(json.faults, [], 'a dead node and a failed VM are faults only once keepaliled has stored them');
    assert.equal(json.health, 100);

    await storeFault('VM_FAILED_DB1', { delta: '10', last: '2026-01-02 10:00:00', message: 'VM db1 was failed: libvirt: no such file' });
    await storeFault('DEAD_NODE_HV3', { delta: '50', last: '2026-01-02 09:00:00', message: 'Node hv3 was dead and/or fenced' });
    await storeFault('MEMORY_OVERPROVISIONED', { delta: '50', last: '2026-01-02 11:00:00', status: 'ack', ack: '2026-01-02 11:30:00', message: 'Cluster memory was overprovisioned' });
    await storeFault('CEPH_WARN_X', { delta: '10', last: '2026-01-02 12:00:00', message: 'newer, same delta as VM_FAILED_DB1' });
    json = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.deepEqual(json.faults.map((f) => [f.id, f.status, f.delta]), [
      ['DEAD_NODE_HV3', 'new', 50], ['CEPH_WARN_X', 'new', 10], ['VM_FAILED_DB1', 'new', 10], ['MEMORY_OVERPROVISIONED', 'ack', 0],
    ], 'by delta, then the last reported; acknowledged at 0, last');
    assert.equal(json.health, 30, '100 - (50 + 10 + 10): the acknowledged 50 does not count');
    assert.equal(json.faults[0]?.lastReported, '2026-01-02 09:00:00');
    assert.equal(json.faults[3]?.acknowledgedAt, '2026-01-02 11:30:00');
    const human = await rig.ok('cluster', 'status');
    assert.match(human, /Health: +30%/);
    assert.match(human, /VMs: +3: 1 fail, 1 start, 1 stop/);
    assert.match(human, /^ID +Status +Delta +Last reported +Message$/m);
    assert.match(human, /^DEAD_NODE_HV3 +new +50 +2026-01-02 09:00:00 +Node hv3 was dead and\/or fenced$/m);
    assert.match(human, /^MEMORY_OVERPROVISIONED +ack +0 +2026-01-02 11:00:00 +Cluster memory was overprovisioned$/m);
    assert.doesNotMatch(human, /\x1b\[/, 'no colour when not on a terminal');
    assert.doesNotMatch(human + JSON.stringify(json), /Secret-IPMI-pass/);

    await storeFault('PLUGIN_A', { delta: '40' });
    await storeFault('PLUGIN_B', { delta: '40' });
    assert.equal((JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus).health, 0, 'never below 0');
  });

  it('maintenance: any strtobool spelling counts (True, yes, 1, ON); on/off write true/false, "already" writes nothing', async () => {
    const maintenance = async (): Promise<boolean> => (JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus).maintenance;
    for (const on of ['True', 'yes', '1', 'ON', 'true', 't']) {
      await rig.zk.set(paths.config.maintenance, on);
      assert.equal(await maintenance(), true, on);
    }
    assert.match(await rig.ok('cluster', 'status'), /Health: +100% \(maintenance on\)/);
    const before = await rig.zk.exists(paths.config.maintenance);
    assert.equal(await rig.ok('cluster', 'maintenance', 'on'), 'Maintenance mode is already on\n');
    assert.equal((await rig.zk.exists(paths.config.maintenance))?.version, before?.version, 'nothing written');
    assert.equal(await rig.zk.read(paths.config.maintenance), 't');
    for (const off of ['False', 'no', '0', 'off', '']) {
      await rig.zk.set(paths.config.maintenance, off);
      assert.equal(await maintenance(), false, off);
    }
    assert.match(await rig.ok('cluster', 'maintenance', 'on'), /Maintenance mode on/);
    assert.equal(await rig.zk.read(paths.config.maintenance), 'true');
    await rig.ok('cluster', 'maintenance', 'off');
    assert.equal(await rig.zk.read(paths.config.maintenance), 'false');
    const bad = await rig.pvc(['cluster', 'maintenance', 'maybe']);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'pvc: maintenance: expected on or off, got "maybe"\n');

    await rig.zk.set(paths.config.maintenance, 'perhaps');
    const s = await rig.pvc(['cluster', 'status', '-f', 'json']);
    assert.equal(s.code, 0);
    const status = JSON.parse(s.stdout) as ClusterStatus;
    assert.equal(status.maintenance, false, 'an unreadable value is the default: off');
    assert.match(status.problems.join(), /bad value in Zookeeper at \/config\/maintenance: "perhaps"/);
    assert.match((await rig.pvc(['cluster', 'status'])).stderr, /\/config\/maintenance: "perhaps" is not a strtobool value/);
  });

  /** Every key under /faults with its value and version (to check that nothing was written). */
  const faultTree = async (): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const id of await rig.zk.children(paths.faults.root)) {
      const f = paths.faults.fault(id);
      for (const key of [f.root, f.firstTime, f.lastTime, f.ackTime, f.status, f.delta, f.message]) {
        const snap = await rig.zk.get(key);
        out[key] = `${snap.stat.version}:${snap.data}`;
      }
    }
    return out;
  };

  it('fault list: the last reported first; one ID; JSON; --long; an unknown ID is exit 1; bad values are shown, not fatal', async () => {
    assert.equal((await rig.pvc(['cluster', 'fault', 'list'])).stderr, 'No faults\n');
    await storeFault('DEAD_NODE_HV3', { delta: '50', first: '2026-01-01 07:00:00', last: '2026-01-02 09:00:00', message: 'Node hv3 was dead and/or fenced' });
    await storeFault('VM_FAILED_DB1', { delta: '10', last: '2026-01-02 10:00:00', status: 'ack', ack: '2026-01-02 10:05:00', message: 'VM db1 was failed' });
    const out = await rig.ok('cluster', 'fault', 'list');
    const lines = out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^ID +Status +Delta +Last reported +Message$/);
    assert.match(lines[1] ?? '', /^VM_FAILED_DB1 +ack +0 +2026-01-02 10:00:00 +VM db1 was failed$/);
    assert.match(lines[2] ?? '', /^DEAD_NODE_HV3 +new +50 +2026-01-02 09:00:00 +Node hv3 was dead and\/or fenced$/);
    assert.equal(lines.length, 3);
    const long = await rig.ok('cluster', 'fault', 'list', '--long');
    assert.match(long, /^DEAD_NODE_HV3 +new +50 +2026-01-01 07:00:00 +2026-01-02 09:00:00 +- +Node hv3/m);
    assert.match(long, /^VM_FAILED_DB1 +ack +0 +2026-01-02 10:00:00 +2026-01-02 10:00:00 +2026-01-02 10:05:00 +VM db1/m);
    const json = JSON.parse(await rig.ok('cluster', 'fault', 'list', 'DEAD_NODE_HV3', '-f', 'json')) as Fault[];
    assert.deepEqual(json, [{
      id: 'DEAD_NODE_HV3', status: 'new', delta: 50, message: 'Node hv3 was dead and/or fenced',
      firstReported: '2026-01-01 07:00:00', lastReported: '2026-01-02 09:00:00', acknowledgedAt: '', problems: [],
    }]);
    const unknown = await rig.pvc(['cluster', 'fault', 'list', 'NOPE']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'pvc: no fault with ID "NOPE" (faults: DEAD_NODE_HV3, VM_FAILED_DB1)\n');

    await storeFault('BROKEN', { delta: 'lots', last: 'yesterday', status: 'maybe' });
    const bad = await rig.pvc(['cluster', 'fault', 'list']);
    assert.equal(bad.code, 0, bad.stderr);
    assert.match(bad.stdout, /^BROKEN +new +0 +- +BROKEN message$/m);
    for (const key of ['delta: "lots"', 'last_time: "yesterday"', 'status: "maybe"']) assert.match(bad.stderr, new RegExp(`^fault BROKEN: bad value in Zookeeper at /faults/BROKEN/${key}`, 'm'));
  });

  it('fault ack: status ack and ack_time now, the rest kept; health rises; "already" writes nothing; unknown IDs write nothing', async () => {
    await storeFault('DEAD_NODE_HV3', { delta: '50', last: '2026-01-02 09:00:00', message: 'Node hv3 was dead and/or fenced' });
    await storeFault('VM_FAILED_DB1', { delta: '10', last: '2026-01-02 10:00:00' });
    await storeFault('CEPH_WARN_X', { delta: '10', last: '2026-01-02 11:00:00' });
    assert.equal((JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus).health, 30);

    const before = await faultTree();
    const unknown = await rig.pvc(['cluster', 'fault', 'ack', 'DEAD_NODE_HV3', 'NOPE', 'ALSO_NOPE']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^pvc: no fault with ID "NOPE", "ALSO_NOPE" \(faults: CEPH_WARN_X, DEAD_NODE_HV3, VM_FAILED_DB1\); nothing written\n$/);
    assert.deepEqual(await faultTree(), before, 'nothing written, not even for the known ID');

    const t0 = Date.now();
    assert.equal(await rig.ok('cluster', 'fault', 'ack', 'DEAD_NODE_HV3'), 'Acknowledged fault DEAD_NODE_HV3\n');
    const f = paths.faults.fault('DEAD_NODE_HV3');
    assert.equal(await rig.zk.read(f.status), 'ack');
    const ackTime = await rig.zk.read(f.ackTime) ?? '';
    assert.match(ackTime, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'the original\'s local time format');
    const ackMs = codec.localTime.decode(ackTime, f.ackTime);
    assert.ok(ackMs >= Math.floor(t0 / 1000) * 1000 - 1000 && ackMs <= Date.now() + 1000, `${ackTime} is now`);
    assert.deepEqual(
      [await rig.zk.read(f.lastTime), await rig.zk.read(f.firstTime), await rig.zk.read(f.delta), await rig.zk.read(f.message)],
      ['2026-01-02 09:00:00', '2026-01-02 09:00:00', '50', 'Node hv3 was dead and/or fenced'],
      'last_time, delta and message are the fault writer\'s',
    );
    const s = JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus;
    assert.equal(s.health, 80);
    assert.deepEqual(s.faults.map((x) => [x.id, x.delta]), [['CEPH_WARN_X', 10], ['VM_FAILED_DB1', 10], ['DEAD_NODE_HV3', 0]]);

    const acked = await faultTree();
    const again = await rig.pvc(['cluster', 'fault', 'ack', 'DEAD_NODE_HV3']);
    assert.deepEqual([again.code, again.stdout], [0, 'Fault DEAD_NODE_HV3 already acknowledged\n']);
    assert.deepEqual(await faultTree(), acked, 'nothing written');

    const both = await rig.ok('cluster', 'fault', 'ack', 'VM_FAILED_DB1', 'DEAD_NODE_HV3', 'VM_FAILED_DB1');
    assert.equal(both, 'Acknowledged fault VM_FAILED_DB1\nFault DEAD_NODE_HV3 already acknowledged\n');
    assert.equal((JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus).health, 90);
  });

  it('fault ack --all / ack-all need --yes; they acknowledge every fault not yet acknowledged', async () => {
    await storeFault('A', { delta: '50' });
    await storeFault('B', { delta: '10', status: 'ack', ack: '2026-01-02 08:30:00' });
    await storeFault('C', { delta: '10' });
    const before = await faultTree();
    for (const args of [['ack', '--all'], ['ack-all'], ['ack']]) {
      const r = await rig.pvc(['cluster', 'fault', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, args.length === 1 && args[0] === 'ack' ? /give one or more fault IDs/ : /add --yes to confirm/);
    }
    const both = await rig.pvc(['cluster', 'fault', 'ack', 'A', '--all', '--yes']);
    assert.deepEqual([both.code, both.stderr], [2, 'pvc: ack: give fault IDs or --all, not both\n']);
    assert.deepEqual(await faultTree(), before);
    assert.equal(await rig.ok('cluster', 'fault', 'ack-all', '--yes'), 'Acknowledged faults A, C\nFault B already acknowledged\n');
    assert.equal(await rig.zk.read(paths.faults.fault('B').ackTime), '2026-01-02 08:30:00', 'kept');
    assert.equal((JSON.parse(await rig.ok('cluster', 'status', '-f', 'json')) as ClusterStatus).health, 100);
    await storeFault('D', { delta: '10' });
    assert.equal(await rig.ok('cluster', 'fault', 'ack', '--all', '-y'), 'Acknowledged fault D\nFaults A, B, C already acknowledged\n');
  });

  it('fault delete removes each fault with its keys; unknown IDs write nothing; delete-all / --all need --yes', async () => {
    for (const id of ['A', 'B', 'C', 'D']) await storeFault(id);
    const before = await faultTree();
    const unknown = await rig.pvc(['cluster', 'fault', 'delete', 'A', 'NOPE']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^pvc: no fault with ID "NOPE" .*; nothing written\n$/);
    assert.deepEqual(await faultTree(), before);

    assert.equal(await rig.ok('cluster', 'fault', 'delete', 'A'), 'Deleted fault A\n');
    assert.equal(await rig.zk.exists(paths.faults.fault('A').root), undefined);
    assert.equal(await rig.ok('cluster', 'fault', 'delete', 'B', 'C'), 'Deleted faults B, C\n');
    assert.deepEqual(await rig.zk.children(paths.faults.root), ['D']);

    for (const args of [['delete-all'], ['delete', '--all']]) assert.equal((await rig.pvc(['cluster', 'fault', ...args])).code, 2);
    assert.deepEqual(await rig.zk.children(paths.faults.root), ['D']);
    assert.equal(await rig.ok('cluster', 'fault', 'delete-all', '--yes'), 'Deleted fault D\n');
    assert.deepEqual(await rig.zk.children(paths.faults.root), []);
    assert.equal(await rig.ok('cluster', 'fault', 'delete', '--all', '--yes'), 'No faults to delete\n');
    assert.notEqual(await rig.zk.exists(paths.faults.root), undefined, '/faults itself stays');
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
    assert.match(s.nodes.list[0]?.problems.join() ?? '', /bad value in Zookeeper at \/nodes\/hv1\/memtotal: "lots" is not an integer/);
    assert.equal(s.nodes.list[0]?.memory.totalMiB, 0, 'the key\'s fallback');
    const human = await rig.pvc(['cluster', 'status']);
    assert.equal(human.code, 0);
    assert.match(human.stderr, /^node hv1: bad value in Zookeeper at \/nodes\/hv1\/memtotal/m);
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
