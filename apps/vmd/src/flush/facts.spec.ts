import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger, VirtualClock } from '@pvc/runtime';
import { newDomainObject, paths } from '@pvc/zk';
import { FakeZkServer, FakeZkStats } from '@pvc/zk/testing';
import { testXml } from '../testing.js';
import { FLUSH_RESCAN_MS, FlushScope, VM_CONFIG_MAX_AGE_MS } from './facts.js';
import { uuidOf } from './rig.js';

async function scopeRig(kind: 'flush' | 'unflush' = 'unflush') {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  await admin.ensurePath(paths.domains);
  const define = async (i: number, node: string, lastNode = ''): Promise<string> => {
    const u = uuidOf(i);
    const d = newDomainObject({ uuid: u, name: `vm${i}`, xml: testXml(`vm${i}`, u), node, state: 'start' });
    await admin.createObject(d.root, d.entries);
    if (lastNode !== '') await admin.write([[paths.domain(u).lastNode, lastNode]]);
    return u;
  };
  for (let i = 1; i <= 40; i++) await define(i, i <= 2 ? 'hv1' : 'hv2', i === 3 ? 'hv1' : '');
  const zk = await server.connect();
  const scope = new FlushScope({ zk, logger: silentLogger(), self: 'hv1', kind });
  const none = new Set<string>();
  /** One step's read, with the requests it cost. */
  const read = async (opts: { active?: Set<string>; extra?: Set<string>; force?: boolean } = {}) => {
    const before = server.stats.snapshot();
    const r = await scope.read(opts.active ?? none, opts.extra ?? none, clock.now(), opts.force ?? false);
    return { ...r, uuids: r.vms.map((v) => v.uuid).sort(), ops: FakeZkStats.diff(before, server.stats.snapshot()).totalOps };
  };
  return { clock, admin, define, read, close: async () => { await zk.close(); await admin.close(); } };
}

describe('FlushScope: which VMs a flush step reads', () => {
  it('scans every VM at the first step, then reads only the ones concerning this node', async () => {
    const r = await scopeRig();
    const first = await r.read();
    assert.equal(first.full, true);
    assert.deepEqual(first.uuids, [uuidOf(1), uuidOf(2), uuidOf(3)], 'assigned here, or lastnode here');
    await r.clock.advance(500);
    const next = await r.read({ active: new Set([uuidOf(2), uuidOf(40)]) });
    assert.equal(next.full, false);
    assert.deepEqual(next.uuids, [uuidOf(1), uuidOf(2), uuidOf(3), uuidOf(40)], 'and what runs here');
    assert.ok(next.ops < first.ops / 2, `a step between scans costs ${next.ops} requests, a scan ${first.ops}`);
    assert.ok(next.ops <= 1 + 4 * 11, `one children list and the four VMs' keys (${next.ops})`);
    await r.close();
  });

  it('a new VM is read at once; a VM a user assigns here is found by the next scan (or a forced one)', async () => {
    const r = await scopeRig();
    await r.read();
    await r.define(41, 'hv1');
    await r.admin.write([[paths.domain(uuidOf(10)).node, 'hv1']]);
    await r.clock.advance(500);
    const next = await r.read();
    assert.ok(next.uuids.includes(uuidOf(41)), 'new VM');
    assert.ok(!next.uuids.includes(uuidOf(10)), 'not yet: no scan');
    const forced = await r.read({ force: true });
    assert.equal(forced.full, true);
    assert.ok(forced.uuids.includes(uuidOf(10)));
    await r.admin.write([[paths.domain(uuidOf(11)).node, 'hv1']]);
    await r.clock.advance(FLUSH_RESCAN_MS);
    const rescan = await r.read();
    assert.equal(rescan.full, true);
    assert.ok(rescan.uuids.includes(uuidOf(11)), 'periodic scan');
    await r.close();
  });

  it('a VM moved away (node elsewhere, lastnode not here) and not running here is no longer read', async () => {
    const r = await scopeRig();
    await r.read();
    await r.admin.write([[paths.domain(uuidOf(1)).node, 'hv2']]);
    await r.clock.advance(500);
    const moved = await r.read({ extra: new Set([uuidOf(1)]) });
    assert.ok(moved.uuids.includes(uuidOf(1)), 'still read while its move is in flight (extra)');
    const after = await r.read();
    assert.ok(!after.uuids.includes(uuidOf(1)), 'dropped once it concerns this node no more');
    assert.ok(after.uuids.includes(uuidOf(2)));
    await r.close();
  });

  it('a VM\'s configuration is reused for VM_CONFIG_MAX_AGE_MS; its state, node, lastnode and failedreason are read at every step', async () => {
    const r = await scopeRig('flush');
    const p1 = paths.domain(uuidOf(1));
    const first = await r.read();
    assert.deepEqual(first.vms.find((v) => v.uuid === uuidOf(1))?.nodeLimit, []);
    await r.admin.write([[p1.nodeLimit, 'hv3'], [p1.state, 'migrate'], [p1.failedReason, 'a reason']]);
    await r.clock.advance(VM_CONFIG_MAX_AGE_MS / 2);
    const soon = await r.read();
    const vm1 = soon.vms.find((v) => v.uuid === uuidOf(1));
    assert.equal(vm1?.state, 'migrate', 'state read at once');
    assert.equal(vm1?.failedReason, 'a reason', 'failedreason read at once');
    assert.deepEqual(vm1?.nodeLimit, [], 'the configuration as read half an age ago');
    assert.ok(soon.ops <= 1 + 2 * 4, `one children list and 4 keys of each of the 2 VMs (${soon.ops})`);
    await r.clock.advance(VM_CONFIG_MAX_AGE_MS / 2);
    const later = await r.read();
    assert.deepEqual(later.vms.find((v) => v.uuid === uuidOf(1))?.nodeLimit, ['hv3'], 'read again once the age is reached');
    await r.close();
  });

  it('a flush does not read the VMs it already moved (lastnode here, assigned elsewhere); an unflush does', async () => {
    const flush = await scopeRig('flush');
    assert.deepEqual((await flush.read()).uuids, [uuidOf(1), uuidOf(2)]);
    await flush.close();
    const unflush = await scopeRig('unflush');
    assert.deepEqual((await unflush.read()).uuids, [uuidOf(1), uuidOf(2), uuidOf(3)]);
    await unflush.close();
  });
});
