// `pvc vm start|stop|shutdown|restart|disable|migrate|move|unmigrate` against a real Zookeeper,
// with vmd + keepaliled faked (fake-vmd.ts) where --wait waits on them.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { newDomainObject, paths, type DomainTag } from '@pvc/zk';
import { domainXml, useRig, type CliRig } from './support.js';
import { FakeVmd } from './fake-vmd.js';

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';

interface VmSetup {
  node?: string;
  state?: string;
  running?: boolean;
  lastNode?: string;
  nodeLimit?: string[];
  tags?: DomainTag[];
  memoryMiB?: number;
}

describe('pvc vm state changes and migration', () => {
  let rig: CliRig;
  let fake: FakeVmd;
  useRig((r) => (rig = r), async () => {
    for (const n of ['hv1', 'hv2']) await rig.addNode(n);
    fake = new FakeVmd(rig.zk);
    fake.start();
  });
  afterEach(async () => fake.stop());

  async function defineVm(name: string, uuid: string, o: VmSetup = {}): Promise<void> {
    const node = o.node ?? 'hv1';
    const obj = newDomainObject({
      uuid, name, xml: domainXml(name, { uuid, memoryMiB: o.memoryMiB ?? 256 }), node, state: o.state ?? 'stop',
      ...(o.nodeLimit ? { nodeLimit: o.nodeLimit } : {}), ...(o.tags ? { tags: o.tags } : {}),
    });
    await rig.zk.createObject(obj.root, obj.entries);
    if (o.lastNode) await rig.zk.write([[paths.domain(uuid).lastNode, o.lastNode]]);
    if (o.running) await fake.setRunning(uuid, node);
  }

  const state = async (uuid = U1): Promise<string | undefined> => rig.zk.read(paths.domain(uuid).state);
  const version = async (uuid = U1): Promise<number | undefined> => (await rig.zk.exists(paths.domain(uuid).state))?.version;
  const keys = async (uuid = U1): Promise<string[]> => {
    const d = paths.domain(uuid);
    return Promise.all([d.state, d.node, d.lastNode].map(async (p) => (await rig.zk.read(p)) ?? ''));
  };

  it('start --wait: waits until the VM is in its node\'s runningdomains', async () => {
    await defineVm('web', U1);
    const r = await rig.pvc(['vm', 'start', 'web', '--wait']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Set VM "web" to start \(was stop\); done: start, node hv1, running on hv1\n$/);
    assert.match(r.stderr, /VM "web" start: start, node hv1, /);
    assert.deepEqual(await fake.runningOn(U1), ['hv1']);
  });

  it('an unreadable state: a warning naming it; migrate refuses (nothing written), stop still works', async () => {
    await defineVm('web', U1);
    await rig.zk.set(paths.domain(U1).state, 'bogus');
    const warning = new RegExp(`^pvc: warning: bad value in Zookeeper at /domains/${U1}/state: "bogus" is not one of start/`, 'm');
    const m = await rig.pvc(['vm', 'migrate', 'web', '-t', 'hv2']);
    assert.equal(m.code, 1);
    assert.match(m.stderr, warning);
    assert.match(m.stderr, /^pvc: cannot migrate VM "web": its state is empty or unreadable/m);
    assert.deepEqual(await keys(), ['bogus', 'hv1', '']);
    const r = await rig.pvc(['vm', 'stop', 'web']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, warning);
    assert.equal(r.stdout, 'Set VM "web" to stop (was (empty))\n');
    assert.equal(await state(), 'stop');
  });

  it('start of a started VM rewrites start (version bumps) and says so', async () => {
    await defineVm('web', U1, { state: 'start', running: true });
    const v = await version();
    const out = await rig.ok('vm', 'start', U1);
    assert.match(out, /was start\); rewritten to make its node start it if it is not running/);
    assert.ok((await version())! > v!);
  });

  it('start --wait: a failed start exits 1 with the failedreason', async () => {
    await defineVm('web', U1);
    fake.failStart.add(U1);
    const r = await rig.pvc(['vm', 'start', 'web', '-w']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /pvc: VM "web" start failed: fake vmd: libvirt error: cannot start\n$/);
    assert.equal(await state(), 'fail');
  });

  it('start --wait: nobody reacts → exit 4 after --wait-timeout with the last state seen', async () => {
    await defineVm('web', U1);
    fake.ignore.add(U1);
    const r = await rig.pvc(['vm', 'start', 'web', '-w', '--wait-timeout', '1']);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /pvc: VM "web" start: not done after 1 s \(last seen: start, node hv1, not running\)\n$/);
    assert.equal(await state(), 'start');
  });

  it('restart and shutdown of a stopped VM are refused, nothing written', async () => {
    await defineVm('web', U1);
    const v = await version();
    for (const action of ['restart', 'shutdown']) {
      const r = await rig.pvc(['vm', action, 'web']);
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `pvc: cannot ${action} VM "web": it is stop, not start\n`);
    }
    assert.equal(await version(), v);
  });

  it('start/stop/disable refuse a mirror unless --force', async () => {
    await defineVm('copy', U1, { state: 'mirror' });
    const v = await version();
    for (const action of ['start', 'stop', 'disable']) {
      const r = await rig.pvc(['vm', action, 'copy']);
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `pvc: cannot ${action} VM "copy": it is mirror (a mirror destination); add --force to do it anyway\n`);
    }
    assert.equal(await version(), v);
    fake.paused = true;
    await rig.ok('vm', 'start', 'copy', '--force');
    assert.equal(await state(), 'start');
  });

  it('stop --wait and shutdown --wait: until stop and running nowhere', async () => {
    await defineVm('a', U1, { state: 'start', running: true });
    await defineVm('b', U2, { state: 'start', running: true, node: 'hv2' });
    const stop = await rig.pvc(['vm', 'stop', 'a', '-w']);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, /done: stop, node hv1, not running/);
    const shut = await rig.pvc(['vm', 'shutdown', 'b', '--wait']);
    assert.equal(shut.code, 0, shut.stderr);
    assert.equal(await state(U2), 'stop');
    assert.deepEqual(await fake.runningOn(U2), []);
    assert.ok(fake.seen.includes(`${U2} shutdown`));
  });

  it('restart --wait: until start again and running on its node', async () => {
    await defineVm('web', U1, { state: 'start', running: true });
    const r = await rig.pvc(['vm', 'restart', 'web', '-w']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fake.seen.includes(`${U1} restart`));
    assert.equal(await state(), 'start');
    assert.deepEqual(await fake.runningOn(U1), ['hv1']);
  });

  it('disable of a running VM shuts it down first (or stops it with --force), then writes disable', async () => {
    await defineVm('a', U1, { state: 'start', running: true });
    await defineVm('b', U2, { state: 'start', running: true });
    const r = await rig.pvc(['vm', 'disable', 'a', '-w']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await state(U1), 'disable');
    assert.ok(fake.seen.includes(`${U1} shutdown`));
    await rig.ok('vm', 'disable', 'b', '--force');
    assert.equal(await state(U2), 'disable');
    assert.ok(fake.seen.includes(`${U2} stop`));
    assert.ok(!fake.seen.includes(`${U2} shutdown`));
    assert.deepEqual(await fake.runningOn(U2), []);
  });

  it('disable: refused during a restart; times out (exit 4) when the VM never stops, leaving shutdown', async () => {
    fake.ignore.add(U1);
    await defineVm('a', U1, { state: 'restart', running: true });
    const v = await version();
    const r = await rig.pvc(['vm', 'disable', 'a']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'pvc: cannot disable VM "a" while it is restart: wait until that is done\n');
    assert.equal(await version(), v);
    await rig.zk.write([[paths.domain(U1).state, 'start']]);
    const t = await rig.pvc(['vm', 'disable', 'a', '--wait-timeout', '1']);
    assert.equal(t.code, 4);
    assert.match(t.stderr, /pvc: VM "a" stopping before disable: not done after 1 s/);
    assert.equal(await state(), 'shutdown');
  });

  it('unknown VM exit 1; a name two VMs share exit 1 listing both UUIDs', async () => {
    const r = await rig.pvc(['vm', 'start', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'pvc: no VM named or with UUID "nope"\n');
    await defineVm('twin', U1);
    await defineVm('twin', U2);
    const t = await rig.pvc(['vm', 'stop', 'twin']);
    assert.equal(t.code, 1);
    assert.match(t.stderr, new RegExp(`matches 2 VMs \\(${U1}, ${U2}\\): give the UUID`));
    assert.equal(await state(U1), 'stop');
    await rig.ok('vm', 'start', U2);
    assert.equal(await state(U2), 'start');
  });

  it('migrate --wait (no target: the selector picks hv2), unmigrate --wait back', async () => {
    await defineVm('web', U1, { state: 'start', running: true });
    const r = await rig.pvc(['vm', 'migrate', 'web', '-w']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^VM "web": migrate hv1 → hv2, lastnode hv1; done: running on hv2\n$/);
    assert.deepEqual(await keys(), ['start', 'hv2', 'hv1']);
    assert.deepEqual(await fake.runningOn(U1), ['hv2']);
    const again = await rig.pvc(['vm', 'migrate', 'web', '-t', 'hv1']);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, 'pvc: VM "web" is already migrated (from hv1): use "pvc vm unmigrate", or --force to migrate it again\n');
    const u = await rig.pvc(['vm', 'unmigrate', 'web', '-w']);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(await keys(), ['start', 'hv1', '']);
    assert.deepEqual(await fake.runningOn(U1), ['hv1']);
    const no = await rig.pvc(['vm', 'unmigrate', 'web']);
    assert.equal(no.code, 1);
    assert.equal(no.stderr, 'pvc: VM "web" is not migrated (its lastnode is empty): nothing to undo\n');
  });

  it('migrate --force keeps the original lastnode; --force-live writes migrate-live', async () => {
    await rig.addNode('hv3');
    await defineVm('web', U1, { state: 'start', running: true, node: 'hv2', lastNode: 'hv1' });
    fake.paused = true;
    await rig.ok('vm', 'migrate', 'web', '-t', 'hv3', '--force', '--force-live');
    assert.deepEqual(await keys(), ['migrate-live', 'hv3', 'hv1']);
  });

  it('move clears lastnode; move to the current node of a migrated VM only clears lastnode', async () => {
    await defineVm('web', U1, { state: 'start', running: true, node: 'hv2', lastNode: 'hv1' });
    const v = await version();
    assert.match(await rig.ok('vm', 'move', 'web', '-t', 'hv2'), /stays on hv2; cleared its lastnode/);
    assert.deepEqual(await keys(), ['start', 'hv2', '']);
    assert.equal(await version(), v);
    const r = await rig.pvc(['vm', 'move', 'web', '-t', 'hv1', '-w']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await keys(), ['start', 'hv1', '']);
  });

  it('a stopped VM is reassigned, keeping its state', async () => {
    await defineVm('web', U1);
    const out = await rig.ok('vm', 'migrate', 'web', '-t', 'hv2', '-w');
    assert.match(out, /assigned to hv2 \(was hv1; stop, nothing to move\), lastnode hv1; done: stop/);
    assert.deepEqual(await keys(), ['stop', 'hv2', 'hv1']);
  });

  it('refused targets: unknown, current, flushed, outside node_limit, too small — nothing written', async () => {
    await rig.addNode('hv3', { domainState: 'flushed' });
    await rig.addNode('hv4', { memTotalMiB: 1024, memFreeMiB: 128 });
    await rig.addNode('hv5');
    await defineVm('web', U1, { state: 'start', running: true, nodeLimit: ['hv1', 'hv2', 'hv3', 'hv4'] });
    const v = await version();
    const cases: [string, string][] = [
      ['nowhere', 'pvc: no node named "nowhere" (nodes: hv1, hv2, hv3, hv4, hv5)\n'],
      ['hv1', 'pvc: VM "web" is already on hv1\n'],
      ['hv3', 'pvc: cannot migrate VM "web" to hv3: domain state flushed\n'],
      ['hv4', 'pvc: cannot migrate VM "web" to hv4: 128 MiB free < 256 MiB needed\n'],
      ['hv5', 'pvc: cannot migrate VM "web" to hv5: not in node_limit\n'],
    ];
    for (const [target, message] of cases) {
      const r = await rig.pvc(['vm', 'migrate', 'web', '-t', target]);
      assert.equal(r.code, 1, target);
      assert.equal(r.stderr, message);
    }
    assert.equal(await version(), v);
    assert.deepEqual(await keys(), ['start', 'hv1', '']);
  });

  it('migrate --wait: an aborted migration exits 1 with vmd\'s reason; the VM stays on its source', async () => {
    await defineVm('web', U1, { state: 'start', running: true });
    fake.abortMigration.add(U1);
    const r = await rig.pvc(['vm', 'migrate', 'web', '-t', 'hv2', '-w']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.split('\n').at(-2), 'pvc: VM "web" migrate failed: Migration to hv2 failed: fake vmd: peer refused');
    assert.deepEqual(await keys(), ['start', 'hv1', '']);
    assert.deepEqual(await fake.runningOn(U1), ['hv1']);
  });
});
