import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SELECTORS, isSelector, rankNodes, resolveSelector } from './selectors.js';
import { selectTarget } from './select.js';
import { node, vm } from './testing/fixtures.js';
import type { NodeFacts, Selector, VmRequest } from './types.js';

interface Row {
  readonly title: string;
  readonly nodes: readonly NodeFacts[];
  readonly vm?: Partial<VmRequest>;
  /** The chosen node, or null when no node may be chosen. */
  readonly expect: string | null;
}

/** Runs each row with the selector set at cluster level, in the given and in reversed order. */
function runTable(selector: Selector, rows: readonly Row[]): void {
  for (const row of rows) {
    test(`${selector}: ${row.title}`, () => {
      for (const nodes of [row.nodes, [...row.nodes].reverse()]) {
        const result = selectTarget({ vm: vm(row.vm), nodes, clusterSelector: selector });
        if (row.expect === null) {
          assert.equal(result.ok, false);
          assert.equal(result.ok ? '' : result.code, 'NO_ELIGIBLE_NODE');
        } else {
          assert.equal(result.ok ? result.node : result.reason, row.expect);
          assert.equal(result.ok && result.selector, selector);
        }
      }
    });
  }
}

runTable('mem', [
  { title: 'most memfree wins', nodes: [node('hv1', { memFreeMiB: 4096 }), node('hv2', { memFreeMiB: 8192 }), node('hv3', { memFreeMiB: 2048 })], expect: 'hv2' },
  { title: 'equal memfree → lowest name', nodes: [node('hv3', { memFreeMiB: 8192 }), node('hv2', { memFreeMiB: 8192 }), node('hv1', { memFreeMiB: 100 })], expect: 'hv2' },
  { title: 'best node not run → next best', nodes: [node('hv1', { memFreeMiB: 9000, daemonState: 'dead' }), node('hv2', { memFreeMiB: 5000 }), node('hv3', { memFreeMiB: 4000 })], expect: 'hv2' },
  { title: 'best node is the current one → next best', nodes: [node('hv0', { memFreeMiB: 9000 }), node('hv2', { memFreeMiB: 5000 })], expect: 'hv2' },
  { title: 'ignores provisioned headroom', nodes: [node('hv1', { memFreeMiB: 9000, memProvMiB: 60000 }), node('hv2', { memFreeMiB: 5000 })], expect: 'hv1' },
  { title: 'ignores load and VM counts', nodes: [node('hv1', { memFreeMiB: 9000, cpuLoad: 40, domainsCount: 50 }), node('hv2', { memFreeMiB: 8999 })], expect: 'hv1' },
  { title: 'memfree below the VM → nothing', nodes: [node('hv1', { memFreeMiB: 1023 }), node('hv2', { memFreeMiB: 0 })], expect: null },
]);

// headroom = memused + memfree − memprov
runTable('memprov', [
  { title: 'most headroom wins, not most memfree', nodes: [node('hv1', { memUsedMiB: 8000, memFreeMiB: 16000, memProvMiB: 20000 }), node('hv2', { memUsedMiB: 8000, memFreeMiB: 8000, memProvMiB: 2000 })], expect: 'hv2' },
  { title: 'equal headroom → lowest name', nodes: [node('hvb', { memUsedMiB: 4000, memFreeMiB: 4000, memProvMiB: 2000 }), node('hva', { memUsedMiB: 2000, memFreeMiB: 6000, memProvMiB: 2000 })], expect: 'hva' },
  { title: 'headroom below the VM is rejected although memfree fits', nodes: [node('hv1', { memUsedMiB: 1000, memFreeMiB: 30000, memProvMiB: 30500 }), node('hv2', { memUsedMiB: 1000, memFreeMiB: 2000, memProvMiB: 0 })], expect: 'hv2' },
  { title: 'uses used + free, not memtotal', nodes: [node('hv1', { memTotalMiB: 999999, memUsedMiB: 1000, memFreeMiB: 3000, memProvMiB: 0 }), node('hv2', { memTotalMiB: 8000, memUsedMiB: 1000, memFreeMiB: 4000, memProvMiB: 0 })], expect: 'hv2' },
  { title: 'negative headroom everywhere → nothing', nodes: [node('hv1', { memProvMiB: 40000 }), node('hv2', { memProvMiB: 33000 })], expect: null },
  { title: 'headroom exactly the VM memory fits', nodes: [node('hv1', { memUsedMiB: 0, memFreeMiB: 4096, memProvMiB: 3072 })], expect: 'hv1' },
]);

runTable('vcpus', [
  { title: 'fewest allocated vCPUs wins', nodes: [node('hv1', { vcpuAlloc: 12 }), node('hv2', { vcpuAlloc: 4 }), node('hv3', { vcpuAlloc: 8 })], expect: 'hv2' },
  { title: 'equal vCPUs → lowest name', nodes: [node('hv9', { vcpuAlloc: 2 }), node('hv10', { vcpuAlloc: 2 })], expect: 'hv10' },
  { title: 'zero vCPUs wins', nodes: [node('hv1', { vcpuAlloc: 0 }), node('hv2', { vcpuAlloc: 1 })], expect: 'hv1' },
  { title: 'fewest vCPUs but too little memory → next', nodes: [node('hv1', { vcpuAlloc: 0, memFreeMiB: 512 }), node('hv2', { vcpuAlloc: 30 })], expect: 'hv2' },
  { title: 'counts above the original 9999 start value still compete', nodes: [node('hv1', { vcpuAlloc: 10001 }), node('hv2', { vcpuAlloc: 10000 })], expect: 'hv2' },
  { title: 'fewer host CPUs than the VM needs → next', vm: { vcpus: 16 }, nodes: [node('hv1', { vcpuAlloc: 0, staticCpus: 8 }), node('hv2', { vcpuAlloc: 20, staticCpus: 32 })], expect: 'hv2' },
]);

runTable('load', [
  { title: 'lowest load wins', nodes: [node('hv1', { cpuLoad: 2.5 }), node('hv2', { cpuLoad: 0.75 }), node('hv3', { cpuLoad: 1.1 })], expect: 'hv2' },
  { title: 'fractional difference counts', nodes: [node('hv1', { cpuLoad: 0.5 }), node('hv2', { cpuLoad: 0.49 })], expect: 'hv2' },
  { title: 'equal load → lowest name', nodes: [node('hvc', { cpuLoad: 0.3 }), node('hvb', { cpuLoad: 0.3 }), node('hva', { cpuLoad: 0.31 })], expect: 'hvb' },
  { title: 'lowest load but flushing → next', nodes: [node('hv1', { cpuLoad: 0, domainState: 'flush' }), node('hv2', { cpuLoad: 3 })], expect: 'hv2' },
  { title: 'load above the original 9999 start value still chosen', nodes: [node('hv1', { cpuLoad: 12000 })], expect: 'hv1' },
  { title: 'NaN load (unparsable) is not eligible', nodes: [node('hv1', { cpuLoad: Number.NaN }), node('hv2', { cpuLoad: 50 })], expect: 'hv2' },
]);

runTable('vms', [
  { title: 'fewest running VMs wins', nodes: [node('hv1', { domainsCount: 3 }), node('hv2', { domainsCount: 7 }), node('hv3', { domainsCount: 1 })], expect: 'hv3' },
  { title: 'equal count → lowest name', nodes: [node('hv2', { domainsCount: 0 }), node('hv1', { domainsCount: 0 })], expect: 'hv1' },
  { title: 'fewest VMs but not run → next', nodes: [node('hv1', { domainsCount: 0, daemonState: 'init' }), node('hv2', { domainsCount: 9 })], expect: 'hv2' },
  { title: 'ignores memory once the VM fits', nodes: [node('hv1', { domainsCount: 1, memFreeMiB: 1024 }), node('hv2', { domainsCount: 2, memFreeMiB: 60000 })], expect: 'hv1' },
  { title: 'only the current node → nothing', nodes: [node('hv0', { domainsCount: 0 })], expect: null },
]);

test('SELECTORS lists the five selectors and isSelector accepts exactly them', () => {
  assert.deepEqual([...SELECTORS], ['mem', 'memprov', 'vcpus', 'load', 'vms']);
  for (const s of SELECTORS) assert.equal(isSelector(s), true);
  for (const bad of ['MEM', 'none', '', ' mem', 'fastest', 3, null, undefined]) assert.equal(isSelector(bad), false, String(bad));
  assert.throws(() => (SELECTORS as Selector[]).push('mem'));
});

test('resolveSelector: the VM selector wins unless it defers', () => {
  const rows: [string | undefined, string, string][] = [
    ['vms', 'mem', 'vm:vms'],
    ['load', 'nonsense', 'vm:load'],
    [undefined, 'memprov', 'cluster:memprov'],
    ['', 'vcpus', 'cluster:vcpus'],
    ['none', 'load', 'cluster:load'],
    ['None', 'mem', 'cluster:mem'],
    ['NONE', 'mem', 'error'],
    ['fastest', 'mem', 'error'],
    ['none', 'none', 'error'],
    [undefined, '', 'error'],
  ];
  for (const [vmSel, cluster, want] of rows) {
    const r = resolveSelector(vmSel, cluster);
    assert.equal(r.ok ? `${r.source}:${r.selector}` : 'error', want, `${String(vmSel)} / ${cluster}`);
  }
});

test('rankNodes orders best first without filtering', () => {
  const nodes = [node('b', { cpuLoad: 1 }), node('a', { cpuLoad: 1, daemonState: 'dead' }), node('c', { cpuLoad: 0 })];
  assert.deepEqual(rankNodes(nodes, 'load').map((n) => n.name), ['c', 'a', 'b']);
  assert.deepEqual(nodes.map((n) => n.name), ['b', 'a', 'c'], 'input untouched');
});
