import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNodeLimit } from './node-limit.js';
import { selectTarget } from './select.js';
import { node, vm } from './testing/fixtures.js';
import type { NodeFacts, PlacementResult } from './types.js';

const three = [node('hv1', { memFreeMiB: 9000 }), node('hv2', { memFreeMiB: 8000 }), node('hv3', { memFreeMiB: 7000 })];

function chosen(r: PlacementResult): string {
  return r.ok ? r.node : `${r.code}: ${r.reason}`;
}

test('a failure names why each node was rejected, in name order', () => {
  const nodes = [
    node('hv3', { memFreeMiB: 512 }),
    node('hv1'),
    node('hv2', { daemonState: 'dead' }),
  ];
  const r = selectTarget({ vm: vm({ currentNode: 'hv1' }), nodes, clusterSelector: 'mem' });
  assert.equal(r.ok, false);
  assert.equal(chosen(r), 'NO_ELIGIBLE_NODE: hv1: current node of the VM; hv2: daemon state dead; hv3: 512 MiB free < 1024 MiB needed');
  assert.deepEqual(r.rejected.map((x) => x.node), ['hv1', 'hv2', 'hv3']);
});

test('a success says why and lists the rejected nodes', () => {
  const nodes = [...three, node('hv4', { domainState: 'flushed' })];
  const r = selectTarget({ vm: vm(), nodes, clusterSelector: 'mem' });
  assert.deepEqual(r, {
    ok: true,
    node: 'hv1',
    selector: 'mem',
    selectorSource: 'cluster',
    reason: 'hv1 has the most free memory (9000 MiB) of 3 eligible nodes',
    rejected: [{ node: 'hv4', why: 'domain state flushed' }],
    unknownLimitNodes: [],
  });
  const only = selectTarget({ vm: vm(), nodes: [node('hv2', { domainsCount: 3 })], clusterSelector: 'vms' });
  assert.equal(only.ok && only.reason, 'hv2 has the fewest running VMs (3) of the only eligible node');
});

test('no nodes at all', () => {
  assert.equal(chosen(selectTarget({ vm: vm(), nodes: [], clusterSelector: 'mem' })), 'NO_ELIGIBLE_NODE: no nodes');
});

test('the current node is never chosen, even when it is the best', () => {
  for (const current of ['hv1', 'hv2', 'hv3']) {
    const r = selectTarget({ vm: vm({ currentNode: current }), nodes: three, clusterSelector: 'mem' });
    assert.notEqual(chosen(r), current);
    assert.equal(chosen(r), current === 'hv1' ? 'hv2' : 'hv1');
  }
});

test('exclude removes further nodes (e.g. the node being fenced)', () => {
  const r = selectTarget({ vm: vm(), nodes: three, clusterSelector: 'mem', exclude: ['hv1', 'hv9'] });
  assert.equal(chosen(r), 'hv2');
  assert.deepEqual(r.rejected, [{ node: 'hv1', why: 'excluded' }]);
  const none = selectTarget({ vm: vm(), nodes: three, clusterSelector: 'mem', exclude: ['hv1', 'hv2', 'hv3'] });
  assert.equal(none.ok ? '' : none.code, 'NO_ELIGIBLE_NODE');
});

test('node_limit restricts the candidates; unknown names are reported, never fatal', () => {
  const rows: [readonly string[] | undefined, string, readonly string[]][] = [
    [undefined, 'hv1', []],
    [[], 'hv1', []],
    [['', ' '], 'hv1', []],
    [['hv2', 'hv3'], 'hv2', []],
    [['hv3'], 'hv3', []],
    [[' hv3 ', 'ghost'], 'hv3', ['ghost']],
    [['zeta', 'hv2', 'alpha', 'zeta'], 'hv2', ['alpha', 'zeta']],
  ];
  for (const [nodeLimit, want, unknown] of rows) {
    const r = selectTarget({ vm: vm({ nodeLimit }), nodes: three, clusterSelector: 'mem' });
    assert.equal(chosen(r), want, JSON.stringify(nodeLimit));
    assert.deepEqual(r.unknownLimitNodes, unknown, JSON.stringify(nodeLimit));
  }
});

test('node_limit naming only unknown or ineligible nodes gives NO_ELIGIBLE_NODE with the unknown names', () => {
  const r = selectTarget({ vm: vm({ nodeLimit: ['ghost', 'hv0'] }), nodes: [node('hv0'), ...three], clusterSelector: 'mem' });
  assert.equal(
    chosen(r),
    'NO_ELIGIBLE_NODE: hv0: current node of the VM; hv1: not in node_limit; hv2: not in node_limit; hv3: not in node_limit',
  );
  assert.deepEqual(r.unknownLimitNodes, ['ghost']);
});

test('parseNodeLimit reads the raw comma list', () => {
  const rows: [string | null | undefined, string[]][] = [
    ['', []],
    [null, []],
    [undefined, []],
    ['hv1', ['hv1']],
    ['hv1,hv2', ['hv1', 'hv2']],
    [' hv2 , ,hv1,hv2,', ['hv2', 'hv1']],
  ];
  for (const [raw, want] of rows) assert.deepEqual(parseNodeLimit(raw), want, String(raw));
});

test('ties are broken by name whatever the input order', () => {
  const tied: NodeFacts[] = ['hvc', 'hva', 'hvd', 'hvb'].map((n) => node(n, { memFreeMiB: 4096, cpuLoad: 0.5 }));
  for (let i = 0; i < tied.length; i++) {
    const rotated = [...tied.slice(i), ...tied.slice(0, i)];
    for (const order of [rotated, [...rotated].reverse()]) {
      for (const sel of ['mem', 'memprov', 'vcpus', 'load', 'vms']) {
        assert.equal(chosen(selectTarget({ vm: vm(), nodes: order, clusterSelector: sel })), 'hva', sel);
      }
    }
  }
});

test('unknown selectors give UNKNOWN_SELECTOR naming the value', () => {
  const vmLevel = selectTarget({ vm: vm({ selector: 'fastest' }), nodes: three, clusterSelector: 'mem' });
  assert.equal(chosen(vmLevel), 'UNKNOWN_SELECTOR: unknown VM node_selector "fastest"; expected one of mem, memprov, vcpus, load, vms');
  const cluster = selectTarget({ vm: vm({ selector: 'none' }), nodes: three, clusterSelector: 'Mem' });
  assert.equal(chosen(cluster), 'UNKNOWN_SELECTOR: unknown cluster migration_target_selector "Mem"; expected one of mem, memprov, vcpus, load, vms');
  const unknownLimit = selectTarget({ vm: vm({ nodeLimit: ['ghost'] }), nodes: three, clusterSelector: '' });
  assert.deepEqual(unknownLimit.unknownLimitNodes, ['ghost'], 'reported on every failure');
});

test('the VM selector overrides the cluster one; none/None/empty defer to it', () => {
  const nodes = [node('hv1', { memFreeMiB: 20000, domainsCount: 9 }), node('hv2', { memFreeMiB: 4000, domainsCount: 1 })];
  const rows: [string | undefined, string, string, string][] = [
    ['vms', 'mem', 'hv2', 'vm'],
    ['mem', 'vms', 'hv1', 'vm'],
    [undefined, 'vms', 'hv2', 'cluster'],
    ['', 'vms', 'hv2', 'cluster'],
    ['none', 'mem', 'hv1', 'cluster'],
    ['None', 'vms', 'hv2', 'cluster'],
  ];
  for (const [selector, clusterSelector, want, source] of rows) {
    const r = selectTarget({ vm: vm({ selector }), nodes, clusterSelector });
    assert.equal(chosen(r), want, `${String(selector)}/${clusterSelector}`);
    assert.equal(r.ok && r.selectorSource, source);
  }
});

test('an invalid VM is refused before any node is judged', () => {
  const rows: [number, number, string][] = [
    [0, 2, 'VM vm1: memoryMiB must be a positive number, got 0'],
    [-5, 2, 'VM vm1: memoryMiB must be a positive number, got -5'],
    [Number.NaN, 2, 'VM vm1: memoryMiB must be a positive number, got NaN'],
    [1024, -1, 'VM vm1: vcpus must be a number ≥ 0, got -1'],
    [1024, Number.NaN, 'VM vm1: vcpus must be a number ≥ 0, got NaN'],
  ];
  for (const [memoryMiB, vcpus, want] of rows) {
    assert.equal(chosen(selectTarget({ vm: vm({ memoryMiB, vcpus }), nodes: three, clusterSelector: 'mem' })), `INVALID_VM: ${want}`);
  }
});
