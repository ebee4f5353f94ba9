import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newNodeObject, nodeKeys, pair, type ZkClient } from '@pvc/zk';
import { fails, fakeCluster } from '../testing/fake-cluster.js';
import { planDefine } from './vm-define.js';

const UUID = '6a000000-0000-0000-0000-000000000001';
const xml = (...bridges: string[]): string =>
  `<domain type='kvm'><name>web</name><uuid>${UUID}</uuid><memory unit='MiB'>512</memory><vcpu>1</vcpu><devices>` +
  bridges.map((b, i) => `<interface type='bridge'><mac address='52:54:00:00:00:0${i}'/><source bridge='${b}'/><model type='virtio'/></interface>`).join('') +
  '</devices></domain>';

/** run+ready nodes; `networks` undefined = no networks_up key (unknown). */
async function nodes(zk: ZkClient, spec: Record<string, { free: number; networks?: number[] }>): Promise<void> {
  for (const [name, s] of Object.entries(spec)) {
    const o = newNodeObject({ name, daemonMode: 'hypervisor', nowMs: 1_700_000_000_000, staticData: '8 k o a', pvcVersion: '1', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(o.root, o.entries);
    const k = nodeKeys(name);
    await zk.write([pair(k.daemonState, 'run'), pair(k.domainState, 'ready'), pair(k.memTotal, 16_384), pair(k.memFree, s.free)]);
    if (s.networks) await zk.write([pair(k.networksUp, s.networks)]);
  }
}

describe('vm define: the VM\'s client networks (networks_up)', () => {
  it('placement skips a node known to lack a network of the VM, takes one whose networks are unknown', async () => {
    const { zk } = await fakeCluster();
    await nodes(zk, { hv1: { free: 9_000, networks: [1200] }, hv2: { free: 4_000, networks: [1100, 1200] }, hv3: { free: 2_000 } });
    const plan = await planDefine(zk, xml('vmbr1100', 'brcluster'), 'web.xml', {}, () => UUID);
    assert.equal(plan.result.node, 'hv2', 'hv1 has the most free memory but lacks network 1100');
    await zk.write([pair(nodeKeys('hv2').networksUp, [])]);
    assert.equal((await planDefine(zk, xml('vmbr1100'), 'web.xml', {}, () => UUID)).result.node, 'hv3');
  });

  it('no node has it: refused naming each node; --target a node lacking it: refused; a VM without vmbr<vni> NICs goes anywhere', async () => {
    const { zk } = await fakeCluster();
    await nodes(zk, { hv1: { free: 9_000, networks: [1200] }, hv2: { free: 4_000, networks: [] } });
    await fails(planDefine(zk, xml('vmbr1100'), 'web.xml', {}, () => UUID), 1,
      /^no node can take VM web: hv1: lacks network 1100 \(vmbr1100\); hv2: lacks network 1100 \(vmbr1100\)$/);
    await fails(planDefine(zk, xml('vmbr1100', 'vmbr1300'), 'web.xml', { target: 'hv1' }, () => UUID), 1,
      /^--target: node hv1 lacks networks 1100 \(vmbr1100\), 1300 \(vmbr1300\) \(not in its networks_up\)$/);
    assert.equal((await planDefine(zk, xml('vmbr1200'), 'web.xml', { target: 'hv1' }, () => UUID)).result.node, 'hv1');
    assert.equal((await planDefine(zk, xml('brcluster'), 'web.xml', {}, () => UUID)).result.node, 'hv1');
  });
});
