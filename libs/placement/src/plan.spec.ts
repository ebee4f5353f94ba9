import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planPlacements, withPlacement } from './plan.js';
import { selectTarget } from './select.js';
import { node, vm } from './testing/fixtures.js';
import type { NodeFacts, VmRequest } from './types.js';

/** Ten 4 GiB VMs on the node being flushed. */
const tenVms: VmRequest[] = Array.from({ length: 10 }, (_, i) => vm({ name: `vm${i}`, memoryMiB: 4096, vcpus: 2, currentNode: 'hv0' }));

function counts(targets: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of targets) out[t] = (out[t] ?? 0) + 1;
  return out;
}

function targetsOf(plan: ReturnType<typeof planPlacements>): string[] {
  return plan.placements.map((p) => (p.result.ok ? p.result.node : `-${p.result.code}`));
}

test('withPlacement charges the target with the VM and leaves the others and the input alone', () => {
  const nodes = [node('hv1'), node('hv2')];
  const after = withPlacement(nodes, 'hv2', vm({ memoryMiB: 2048, vcpus: 3 }));
  assert.equal(after[0], nodes[0]);
  assert.deepEqual(after[1], {
    ...nodes[1],
    memFreeMiB: 16384 - 2048,
    memUsedMiB: 16384 + 2048,
    memAllocMiB: 8192 + 2048,
    memProvMiB: 8192 + 2048,
    vcpuAlloc: 8 + 3,
    domainsCount: 5,
  });
  assert.equal(nodes[1]?.memFreeMiB, 16384, 'input not modified');
});

test('mem: a flush of 10 VMs does not pile onto the node that only fits 2', () => {
  const nodes = [
    node('hv1', { memFreeMiB: 9000 }), // fits 2
    node('hv2', { memFreeMiB: 8500 }), // fits 2
    node('hv3', { memFreeMiB: 8200 }), // fits 2
    node('hv4', { memFreeMiB: 20480 }), // fits 5, and has the most free memory at first
  ];
  const naive = tenVms.map((v) => selectTarget({ vm: v, nodes, clusterSelector: 'mem' }));
  assert.deepEqual(new Set(naive.map((r) => r.ok && r.node)), new Set(['hv4']), 'without updates every VM picks the same node');

  const plan = planPlacements(tenVms, nodes, 'mem');
  const targets = targetsOf(plan);
  assert.deepEqual(targets, ['hv4', 'hv4', 'hv4', 'hv1', 'hv2', 'hv3', 'hv4', 'hv1', 'hv2', 'hv3']);
  assert.deepEqual(counts(targets), { hv1: 2, hv2: 2, hv3: 2, hv4: 4 });
  for (const n of plan.nodes) assert.ok(n.memFreeMiB >= 0, `${n.name} overcommitted`);
});

test('more VMs than the cluster fits: the rest fail with NO_ELIGIBLE_NODE and the plan goes on', () => {
  const nodes = [node('hv1', { memFreeMiB: 8192 }), node('hv2', { memFreeMiB: 4096 })];
  const vms = [...tenVms.slice(0, 4), vm({ name: 'small', memoryMiB: 512, currentNode: 'hv0' })];
  const plan = planPlacements(vms, nodes, 'mem');
  assert.deepEqual(targetsOf(plan), ['hv1', 'hv1', 'hv2', '-NO_ELIGIBLE_NODE', '-NO_ELIGIBLE_NODE']);
  const last = plan.placements[4]?.result;
  assert.equal(last?.ok === false && last.reason, 'hv1: 0 MiB free < 512 MiB needed; hv2: 0 MiB free < 512 MiB needed');
  assert.deepEqual(plan.placements.map((p) => p.vm), ['vm0', 'vm1', 'vm2', 'vm3', 'small']);
});

test('vms and vcpus selectors spread round-robin as counts rise', () => {
  const nodes = [node('hv1', { domainsCount: 0, vcpuAlloc: 0 }), node('hv2', { domainsCount: 1, vcpuAlloc: 2 }), node('hv3', { domainsCount: 0, vcpuAlloc: 0 })];
  for (const selector of ['vms', 'vcpus']) {
    const plan = planPlacements(tenVms.slice(0, 6), nodes, selector);
    assert.deepEqual(targetsOf(plan), ['hv1', 'hv3', 'hv1', 'hv2', 'hv3', 'hv1'], selector);
  }
});

test('memprov: headroom shrinks by the VM memory per placement', () => {
  // headroom: hv1 = 16384 + 16384 − 24576 = 8192 (fits 2), hv2 = 16384 + 16384 − 28672 = 4096 (fits 1)
  const nodes = [node('hv1', { memProvMiB: 24576 }), node('hv2', { memProvMiB: 28672 })];
  const plan = planPlacements(tenVms.slice(0, 4), nodes, 'memprov');
  assert.deepEqual(targetsOf(plan), ['hv1', 'hv1', 'hv2', '-NO_ELIGIBLE_NODE']);
});

test('load is not predicted: VMs go to the least-loaded node until it is full', () => {
  const nodes = [node('hv1', { cpuLoad: 0.1, memFreeMiB: 8192 }), node('hv2', { cpuLoad: 2 })];
  const plan = planPlacements(tenVms.slice(0, 4), nodes, 'load');
  assert.deepEqual(targetsOf(plan), ['hv1', 'hv1', 'hv2', 'hv2']);
  assert.equal(plan.nodes[0]?.cpuLoad, 0.1);
});

test('fence recovery: the dead node is excluded and per-VM limits and selectors still apply', () => {
  const nodes: NodeFacts[] = [node('hv0', { daemonState: 'dead' }), node('hv1', { domainsCount: 9 }), node('hv2'), node('hv3', { memFreeMiB: 20000 })];
  const vms = [
    vm({ name: 'a', currentNode: 'hv0', nodeLimit: ['hv1', 'gone'] }),
    vm({ name: 'b', currentNode: 'hv0', selector: 'vms' }),
    vm({ name: 'c', currentNode: 'hv0' }),
  ];
  const plan = planPlacements(vms, nodes, 'mem', ['hv0']);
  assert.deepEqual(targetsOf(plan), ['hv1', 'hv2', 'hv3']);
  assert.deepEqual(plan.placements[0]?.result.unknownLimitNodes, ['gone']);
  assert.deepEqual(plan.nodes.map((n) => n.domainsCount), [4, 10, 5, 5]);
});
