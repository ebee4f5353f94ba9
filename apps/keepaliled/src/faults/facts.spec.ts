import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { paths, resetBadValueReports } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { memoryLogger } from '../testing/fakes.js';
import { seedBase, seedDomain, seedNode } from '../testing/cluster.js';
import { readClusterFacts } from './facts.js';

const T0 = 1_700_000_000_000;

describe('readClusterFacts()', () => {
  it('reads every node and VM through the key codecs', async () => {
    resetBadValueReports();
    const clock = new VirtualClock(T0);
    const server = new FakeZkServer({ clock });
    const zk = await server.connect();
    await seedBase(zk);
    await seedNode(zk, T0, { name: 'hv2', daemonState: 'fenced', memTotalMiB: 16_384 });
    await seedNode(zk, T0, { name: 'hv1', memTotalMiB: 32_768 });
    await seedDomain(zk, { uuid: 'aaaaaaaa-0000-4000-8000-000000000001', name: 'web', node: 'hv1', state: 'start' });
    await seedDomain(zk, { uuid: 'aaaaaaaa-0000-4000-8000-000000000002', name: 'db', node: 'hv1', state: 'fail' });
    await seedDomain(zk, { uuid: 'aaaaaaaa-0000-4000-8000-000000000003', name: 'web2', node: 'hv2', state: 'stop' });
    await seedDomain(zk, { uuid: 'aaaaaaaa-0000-4000-8000-000000000004', name: 'off', node: 'hv1', state: 'stop' });
    const p = paths.node('hv1').monitoringPlugin('disk');
    await zk.write([
      [paths.node('hv1').memAlloc, '20480'],
      [paths.node('hv2').memAlloc, 'lots'],
      [paths.node('hv1').monitoringPlugins, 'disk a/b'],
      [p.root, 'disk'], [p.healthDelta, '20'], [p.message, 'sda failing'],
      [paths.domain('aaaaaaaa-0000-4000-8000-000000000002').failedReason, 'boom'],
      [paths.domain('aaaaaaaa-0000-4000-8000-000000000003').failedReason, 'Recovery from fenced node hv2: no target (no nodes)'],
      [paths.domain('aaaaaaaa-0000-4000-8000-000000000003').nodeAutostart, 'True'],
      [paths.domain('aaaaaaaa-0000-4000-8000-000000000004').failedReason, 'stopped by hand'],
    ]);
    const log = memoryLogger();
    const facts = await readClusterFacts(zk, { logger: log.logger });
    assert.deepEqual(facts.nodes, [
      { name: 'hv1', daemonState: 'run', memTotalMiB: 32_768, memAllocMiB: 20_480, plugins: [{ name: 'disk', delta: 20, message: 'sda failing' }] },
      { name: 'hv2', daemonState: 'fenced', memTotalMiB: 16_384, memAllocMiB: 0, plugins: [] },
    ]);
    assert.deepEqual(facts.vms, [
      { uuid: 'aaaaaaaa-0000-4000-8000-000000000001', name: 'aaaaaaaa-0000-4000-8000-000000000001', state: 'start', failedReason: '', nodeAutostart: false },
      { uuid: 'aaaaaaaa-0000-4000-8000-000000000002', name: 'db', state: 'fail', failedReason: 'boom', nodeAutostart: false },
      // A stopped VM: its name and node_autostart are read only with recovery's no-target reason.
      { uuid: 'aaaaaaaa-0000-4000-8000-000000000003', name: 'web2', state: 'stop', failedReason: 'Recovery from fenced node hv2: no target (no nodes)', nodeAutostart: true },
      { uuid: 'aaaaaaaa-0000-4000-8000-000000000004', name: 'aaaaaaaa-0000-4000-8000-000000000004', state: 'stop', failedReason: '', nodeAutostart: false },
    ]);
    assert.equal(log.lines.filter((l) => /bad value in Zookeeper/.test(l.msg))[0]?.['key'], paths.node('hv2').memAlloc, 'a bad figure is logged, read as 0');
    assert.deepEqual(log.messages(/not a plugin key/), ['monitoring_plugins lists a name that is not a plugin key; skipped']);
    assert.deepEqual([facts.osds, facts.cephChecks], [[], []], 'no /ceph: no storage facts');
  });

  it('reads the OSD stats and the Ceph health checks through their codecs', async () => {
    resetBadValueReports();
    const server = new FakeZkServer({ clock: new VirtualClock(T0) });
    const zk = await server.connect();
    await seedBase(zk);
    for (const id of ['0', '1', '2', '3', '4']) await zk.ensurePath(paths.ceph.osd(id).root);
    const health = { status: 'HEALTH_WARN', checks: { OSD_DOWN: { severity: 'HEALTH_WARN', summary: { message: '1 osds down', count: 1 }, muted: false } }, mutes: [] };
    await zk.write([
      [paths.ceph.health, JSON.stringify(health)],
      [paths.ceph.osd('0').stats, JSON.stringify({ uuid: 'a', up: 1, in: 1 })],
      [paths.ceph.osd('1').stats, JSON.stringify({ uuid: 'b', up: 0, in: 0 })],
      // The original's osd.add placeholder says "in": 0 before any stats: not an OSD out.
      [paths.ceph.osd('2').stats, '{"uuid": "|", "up": 0, "in": 0, "node": "|"}'],
      [paths.ceph.osd('3').stats, 'not json'],
    ]);
    const log = memoryLogger();
    const facts = await readClusterFacts(zk, { logger: log.logger });
    assert.deepEqual(facts.osds, [{ id: '0', in: 1 }, { id: '1', in: 0 }, { id: '2', in: undefined }, { id: '3', in: undefined }, { id: '4', in: undefined }]);
    assert.deepEqual(facts.cephChecks, [{ name: 'OSD_DOWN', severity: 'HEALTH_WARN', message: '1 osds down' }]);
    assert.equal(log.lines.filter((l) => /bad value in Zookeeper/.test(l.msg))[0]?.['key'], paths.ceph.osd('3').stats, 'a bad stats value is logged, read as unknown');
    await zk.write([[paths.ceph.health, '{"status": "HEALTH_OK"}']]);
    assert.deepEqual((await readClusterFacts(zk, { logger: log.logger })).cephChecks, [], 'a health value of another shape: no checks (logged)');
    await zk.close();
  });
});
