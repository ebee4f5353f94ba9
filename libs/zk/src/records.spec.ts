import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock, createLogger } from '@pvc/runtime';
import { resetBadValueReports } from './key-read.js';
import { newDomainObject, newNodeObject } from './objects.js';
import { readNodeFigures, readVmFacts } from './records.js';
import { paths } from './schema.js';
import { FakeZkServer } from './testing/index.js';

async function rig() {
  const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
  const zk = await server.connect();
  for (const p of [paths.nodes, paths.domains]) await zk.ensurePath(p);
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'test', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  return { zk, lines, logger };
}

describe('shared readers: networks', () => {
  it('readNodeFigures: networks_up absent or unreadable = unknown (no networks field); "" = none; a list = a set', async () => {
    resetBadValueReports();
    const { zk, lines, logger } = await rig();
    const o = newNodeObject({ name: 'hv1', daemonMode: 'coordinator', nowMs: 1_000, staticData: '4 k o a', pvcVersion: '1', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(o.root, o.entries);
    assert.equal(await zk.exists(paths.node('hv1').networksUp), undefined, 'a new node object has no networks_up');
    assert.ok(!('networks' in (await readNodeFigures(zk, 'hv1', logger))));
    const rows: [string, number[] | undefined][] = [['', []], ['1200 1100', [1100, 1200]], ['1100', [1100]], ['11x0', undefined], ['-5', undefined]];
    for (const [raw, want] of rows) {
      await zk.write([[paths.node('hv1').networksUp, raw]]);
      const got = (await readNodeFigures(zk, 'hv1', logger)).networks;
      assert.deepEqual(got === undefined ? undefined : [...got].sort((a, b) => a - b), want, JSON.stringify(raw));
    }
    assert.deepEqual(lines.filter((l) => String(l.msg).startsWith('bad value in Zookeeper at /nodes/hv1/networks_up')).map((l) => l.value), ['11x0', '-5']);
  });

  it('readVmFacts: the VNIs of the vmbr<vni> bridges of the stored XML', async () => {
    const { zk, logger } = await rig();
    const xml = `<domain type='kvm'><name>web</name><memory unit='MiB'>256</memory><vcpu>1</vcpu><devices>
      <interface type='bridge'><source bridge='vmbr1200'/></interface><interface type='bridge'><source bridge='brcluster'/></interface>
      <interface type='bridge'><source bridge='vmbr1100'/></interface></devices></domain>`;
    const d = newDomainObject({ uuid: 'u1', name: 'web', xml, node: 'hv1' });
    await zk.createObject(d.root, d.entries);
    assert.deepEqual((await readVmFacts(zk, 'u1', logger))?.networks, [1100, 1200]);
  });
});
