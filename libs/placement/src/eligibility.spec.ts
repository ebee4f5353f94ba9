import { test } from 'node:test';
import assert from 'node:assert/strict';
import { whyIneligible, type EligibilityContext } from './eligibility.js';
import { selectTarget } from './select.js';
import { node, vm } from './testing/fixtures.js';
import type { Selector } from './types.js';

const DAEMON_STATES = ['init', 'run', 'shutdown', 'stop', 'dead', 'fenced', ''];
const DOMAIN_STATES = ['ready', 'flush', 'flushed', 'unflush', 'fence-flush', ''];

function ctx(over: Partial<EligibilityContext> = {}): EligibilityContext {
  return { vm: vm(), selector: 'mem', exclude: new Set(), allowed: null, ...over };
}

test('only daemonstate run with domainstate ready is eligible (every combination)', () => {
  let eligible = 0;
  for (const daemonState of DAEMON_STATES) {
    for (const domainState of DOMAIN_STATES) {
      const n = node('hv1', { daemonState, domainState });
      const why = whyIneligible(n, ctx());
      const want =
        daemonState !== 'run' ? `daemon state ${daemonState}` : domainState !== 'ready' ? `domain state ${domainState}` : null;
      assert.equal(why, want, `${daemonState}/${domainState}`);
      const result = selectTarget({ vm: vm(), nodes: [n], clusterSelector: 'mem' });
      assert.equal(result.ok, want === null, `${daemonState}/${domainState}`);
      if (why === null) eligible++;
    }
  }
  assert.equal(eligible, 1);
});

test('checks run in a fixed order and the first failure is reported', () => {
  const dead = node('hv1', { daemonState: 'dead', domainState: 'flushed', memFreeMiB: 0 });
  const rows: [EligibilityContext, string][] = [
    [ctx({ vm: vm({ currentNode: 'hv1' }), exclude: new Set(['hv1']), allowed: new Set(['x']) }), 'current node of the VM'],
    [ctx({ exclude: new Set(['hv1']), allowed: new Set(['x']) }), 'excluded'],
    [ctx({ allowed: new Set(['x']) }), 'not in node_limit'],
    [ctx({ allowed: new Set(['hv1']) }), 'daemon state dead'],
  ];
  for (const [c, want] of rows) assert.equal(whyIneligible(dead, c), want);
  const needs = ctx({ vm: vm({ networks: [1100] }) });
  assert.equal(whyIneligible({ ...dead, daemonState: 'run', networks: new Set() }, needs), 'domain state flushed');
  assert.equal(whyIneligible({ ...dead, daemonState: 'run', domainState: 'ready', networks: new Set(), memFreeMiB: Number.NaN }, needs), 'lacks network 1100 (vmbr1100)');
  assert.equal(whyIneligible({ ...dead, daemonState: 'run', domainState: 'ready', networks: new Set([1100]) }, needs), '0 MiB free < 1024 MiB needed');
});

test('networks: a node whose networks are known must have every VNI of the VM; unknown is not checked', () => {
  const rows: [ReadonlySet<number> | undefined, readonly number[] | undefined, string | null][] = [
    [new Set([1100, 1200]), [1100], null],
    [new Set([1100, 1200]), [1200, 1100], null],
    [new Set([1100]), [1100, 1200], 'lacks network 1200 (vmbr1200)'],
    [new Set(), [1300, 1100, 1300], 'lacks networks 1100 (vmbr1100), 1300 (vmbr1300)'],
    [new Set(), [], null],
    [new Set(), undefined, null],
    [undefined, [1100], null],
  ];
  for (const [have, needs, want] of rows) {
    const n = have === undefined ? node('hv1') : node('hv1', { networks: have });
    const v = needs === undefined ? vm() : vm({ networks: needs });
    assert.equal(whyIneligible(n, ctx({ vm: v })), want, `node ${have ? [...have].join(',') : 'unknown'}, VM ${needs?.join(',') ?? 'none'}`);
  }
  const r = selectTarget({ vm: vm({ networks: [1100] }), nodes: [node('hv1', { networks: new Set() }), node('hv2', { networks: new Set([1100]) }), node('hv3')], clusterSelector: 'mem' });
  assert.ok(r.ok);
  assert.deepEqual(r.rejected, [{ node: 'hv1', why: 'lacks network 1100 (vmbr1100)' }]);
});

test('fit: memfree ≥ VM memory, exact equality fits', () => {
  const need = vm({ memoryMiB: 2048 });
  assert.equal(whyIneligible(node('hv1', { memFreeMiB: 2048 }), ctx({ vm: need })), null);
  assert.equal(whyIneligible(node('hv1', { memFreeMiB: 2047 }), ctx({ vm: need })), '2047 MiB free < 2048 MiB needed');
});

test('fit: memprov also needs provisioned headroom ≥ VM memory; other selectors do not', () => {
  const n = node('hv1', { memUsedMiB: 1000, memFreeMiB: 3000, memProvMiB: 3500 }); // headroom 500
  assert.equal(whyIneligible(n, ctx({ selector: 'memprov' })), '500 MiB provisioned headroom < 1024 MiB needed');
  for (const selector of ['mem', 'vcpus', 'load', 'vms'] as Selector[]) assert.equal(whyIneligible(n, ctx({ selector })), null, selector);
  assert.equal(whyIneligible({ ...n, memProvMiB: 2976 }, ctx({ selector: 'memprov' })), null, 'headroom 1024 fits');
});

test('fit: vCPUs ≤ host CPUs when staticCpus is known, ignored when absent', () => {
  const big = vm({ vcpus: 8 });
  assert.equal(whyIneligible(node('hv1', { staticCpus: 8 }), ctx({ vm: big })), null);
  assert.equal(whyIneligible(node('hv1', { staticCpus: 4 }), ctx({ vm: big })), '4 host CPUs < 8 vCPUs needed');
  assert.equal(whyIneligible(node('hv1'), ctx({ vm: big })), null);
});

test('unreadable figures make a node ineligible instead of winning or crashing', () => {
  assert.equal(whyIneligible(node('hv1', { memFreeMiB: Number.NaN }), ctx()), 'memFreeMiB is not a number (NaN)');
  assert.equal(whyIneligible(node('hv1', { memProvMiB: Number.NaN }), ctx({ selector: 'memprov' })), 'memProvMiB is not a number (NaN)');
  assert.equal(whyIneligible(node('hv1', { memProvMiB: Number.NaN }), ctx({ selector: 'mem' })), null, 'memprov unused by mem');
  assert.equal(whyIneligible(node('hv1', { vcpuAlloc: Infinity }), ctx({ selector: 'vcpus' })), 'vcpuAlloc is not a number (Infinity)');
  assert.equal(whyIneligible(node('hv1', { domainsCount: Number.NaN }), ctx({ selector: 'vms' })), 'domainsCount is not a number (NaN)');
  assert.equal(whyIneligible(node('hv1', { staticCpus: Number.NaN }), ctx()), 'staticCpus is not a number (NaN)');
});
