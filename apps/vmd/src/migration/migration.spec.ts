import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, VirtualClock, silentLogger } from '@pvc/runtime';
import { newDomainObject, paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeHypervisor } from '../host/fake-hypervisor.js';
import { createVirshMigrator, peerAddress } from '../host/virsh-migrate.js';
import { testXml } from '../testing.js';
import { DEFAULT_TIMINGS, type MigrationDeps } from './deps.js';
import { receiveVm } from './receive.js';
import { sendVm } from './send.js';

const U = 'bbbbbbbb-0000-4000-8000-000000000001';

/** Two nodes (fake libvirt each) on one fake ZK; virsh migrate moves the domain hv1 → hv2 unless told to fail. */
async function rig(o: { migrateFails?: number; state?: string; method?: string } = {}) {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  await admin.ensurePath(paths.domains);
  const d = newDomainObject({ uuid: U, name: 'vm1', xml: testXml('vm1', U), node: 'hv2', state: o.state ?? 'migrate' });
  await admin.createObject(d.root, d.entries);
  await admin.write([[paths.domain(U).lastNode, 'hv1'], ...(o.method ? [[paths.domain(U).migrationMethod, o.method] as [string, string]] : [])]);
  const hv1 = new FakeHypervisor({ clock });
  const hv2 = new FakeHypervisor({ clock });
  hv1.addRunning(U, 'vm1');
  const exec = new FakeExec();
  let fails = o.migrateFails ?? 0;
  exec.on('virsh -c qemu+tcp://hv1/system migrate-setmaxdowntime', { exitCode: 0 });
  exec.on('virsh -c qemu+tcp://hv1/system migrate ', () => {
    if (fails-- > 0) return { exitCode: 1, stdout: '', stderr: 'error: operation failed: Failed to connect to remote libvirt URI qemu+tcp://hv2/system\n' };
    hv1.vanish(U);
    hv2.addRunning(U, 'vm1');
    return { exitCode: 0, stdout: '', stderr: '' };
  });
  const zks: ZkClient[] = [];
  const deps = async (node: string, hv: FakeHypervisor): Promise<MigrationDeps> => {
    const zk = await server.connect();
    zks.push(zk);
    return {
      zk, hv, clock, logger: silentLogger(), node, migrator: createVirshMigrator(exec, `qemu+tcp://${node}/system`),
      peer: (t) => peerAddress(`qemu+tcp://${node}/system`, node, t), shutdownTimeoutMs: 3000, timings: DEFAULT_TIMINGS,
    };
  };
  const read = async (k: 'state' | 'node' | 'lastNode' | 'failedReason' | 'migrateSyncLock'): Promise<string | undefined> => admin.read(paths.domain(U)[k]);
  const close = async (): Promise<void> => {
    for (const z of zks) await z.close();
    await admin.close();
  };
  return { clock, hv1, hv2, exec, deps, read, close };
}

/** Runs sender (hv1) and receiver (hv2) concurrently in virtual time. */
async function both(r: Awaited<ReturnType<typeof rig>>) {
  const ac = new AbortController();
  const send = sendVm(U, 'vm1', 'hv2', await r.deps('hv1', r.hv1), ac.signal);
  const recv = receiveVm(U, 'vm1', await r.deps('hv2', r.hv2), ac.signal);
  for (let i = 0; i < 200; i++) await r.clock.advance(500);
  return { send: await send, recv: await recv };
}

describe('migration (sender + receiver handshake over ZK locks)', () => {
  it('live migration: runs on hv2 only, receiver writes start, lastnode kept, max downtime set first', async () => {
    const r = await rig();
    await r.deps('x', r.hv1).then((d) => d.zk.write([[paths.domain(U).migrationMaxDowntime, '150']]));
    const out = await both(r);
    assert.deepEqual(out, { send: 'live', recv: 'received' });
    assert.equal(r.hv1.isRunning(U), false);
    assert.equal(r.hv2.isRunning(U), true);
    assert.equal(await r.read('state'), 'start');
    assert.equal(await r.read('node'), 'hv2');
    assert.equal(await r.read('lastNode'), 'hv1');
    assert.equal(await r.read('migrateSyncLock'), '');
    const lines = r.exec.lines();
    assert.equal(lines[0], `virsh -c qemu+tcp://hv1/system migrate-setmaxdowntime ${U} --downtime 150`);
    assert.match(lines[1]!, new RegExp(`migrate --live --timeout 60 ${U} qemu\\+tcp://hv2/system tcp://hv2$`));
    await r.close();
  });

  it('live fails 3× → shutdown migration: off on hv1, stop then start by the receiver', async () => {
    const r = await rig({ migrateFails: 3 });
    const out = await both(r);
    assert.deepEqual(out, { send: 'shutdown', recv: 'start-after-shutdown' });
    assert.equal(r.exec.lines().filter((l) => l.includes(' migrate --live')).length, 3);
    assert.equal(r.hv1.isRunning(U), false, 'destroyed after vm_shutdown_timeout (guest ignores ACPI)');
    assert.deepEqual(r.hv1.shutdowns, [U]);
    assert.equal(await r.read('state'), 'start');
    assert.equal(await r.read('node'), 'hv2');
    await r.close();
  });

  it('migrate-live (forced) and live fails → aborted: keeps running on hv1, node back, failedreason', async () => {
    const r = await rig({ migrateFails: 3, state: 'migrate-live' });
    const out = await both(r);
    assert.deepEqual(out, { send: 'aborted', recv: 'aborted-by-sender' });
    assert.equal(r.hv1.isRunning(U), true);
    assert.equal(r.hv2.isRunning(U), false);
    assert.equal(await r.read('state'), 'start');
    assert.equal(await r.read('node'), 'hv1');
    assert.equal(await r.read('lastNode'), 'hv1');
    assert.match((await r.read('failedReason')) ?? '', /Migration to hv2 failed: live migration failed: virsh migrate: operation failed: Failed to connect/);
    await r.close();
  });

  it('migration_method=shutdown skips the live tries', async () => {
    const r = await rig({ method: 'shutdown' });
    assert.deepEqual(await both(r), { send: 'shutdown', recv: 'start-after-shutdown' });
    assert.equal(r.exec.lines().length, 0);
    await r.close();
  });

  it('no receiver (target vmd/libvirtd down) → "Timed out waiting for peer", VM stays on hv1', async () => {
    const r = await rig();
    const ac = new AbortController();
    const send = sendVm(U, 'vm1', 'hv2', await r.deps('hv1', r.hv1), ac.signal);
    for (let i = 0; i < 80; i++) await r.clock.advance(500);
    assert.equal(await send, 'aborted');
    assert.equal(r.hv1.isRunning(U), true);
    assert.equal(r.exec.lines().length, 0);
    assert.deepEqual([await r.read('state'), await r.read('node')], ['start', 'hv1']);
    assert.match((await r.read('failedReason')) ?? '', /Timed out waiting for peer/);
    await r.close();
  });

  it('state changed before the sender locked (e.g. back to start) → superseded, nothing written', async () => {
    const r = await rig({ state: 'start' });
    assert.equal(await sendVm(U, 'vm1', 'hv2', await r.deps('hv1', r.hv1), new AbortController().signal), 'superseded');
    assert.equal(await r.read('node'), 'hv2');
    await r.close();
  });
});

describe('peerAddress', () => {
  it('substitutes the target in a libvirt_uri naming this node, else qemu+tcp://<target>/system', () => {
    assert.deepEqual(peerAddress('qemu+tcp://hv1:16509/system', 'hv1', 'hv2'), { libvirtUri: 'qemu+tcp://hv2:16509/system', migrateUri: 'tcp://hv2' });
    assert.deepEqual(peerAddress('qemu:///system', 'hv1', 'hv3'), { libvirtUri: 'qemu+tcp://hv3/system', migrateUri: 'tcp://hv3' });
    assert.deepEqual(peerAddress('qemu+tcp://10.0.0.1/system', 'hv1', 'hv2'), { libvirtUri: 'qemu+tcp://hv2/system', migrateUri: 'tcp://hv2' });
  });
});
