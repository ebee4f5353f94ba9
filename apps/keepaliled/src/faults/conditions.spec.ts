import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateFaults, faultId, type CephCheckFact, type ClusterFacts, type NodeFact, type OsdFact, type PluginFact, type VmFact } from './conditions.js';

function node(name: string, o: Partial<Omit<NodeFact, 'name'>> = {}): NodeFact {
  return { name, daemonState: 'run', memTotalMiB: 32_768, memAllocMiB: 0, plugins: [], ...o };
}

function vm(name: string, state: string | undefined, failedReason = '', uuid = `uuid-${name}`, nodeAutostart = false): VmFact {
  return { uuid, name, state, failedReason, nodeAutostart };
}

/** A VM as fence recovery leaves it when it finds no target (`recovery.ts`). */
const NO_TARGET = 'Recovery from fenced node hv3: no target (hv2: domain state flushed)';
const waiting = (name: string, o: { state?: string; reason?: string; autostart?: boolean; uuid?: string } = {}): VmFact =>
  vm(name, o.state ?? 'stop', o.reason ?? NO_TARGET, o.uuid ?? `uuid-${name}`, o.autostart ?? true);

const plugin = (name: string, delta: number, message = 'ok'): PluginFact => ({ name, delta, message });
const osd = (id: string, inValue: number | undefined): OsdFact => ({ id, in: inValue });
const check = (name: string, severity: string, message = `${name} message`): CephCheckFact => ({ name, severity, message });

/** One fault as `ID/delta`, or `ID/delta "message"` when the row checks the message. */
const brief = (facts: ClusterFacts): string[] => evaluateFaults(facts).map((f) => `${f.id}/${f.delta}`);
const messages = (facts: ClusterFacts): string[] => evaluateFaults(facts).map((f) => f.message);

// [what, facts, expected faults as ID/delta]
const TABLE: [string, ClusterFacts, string[]][] = [
  ['a healthy cluster raises nothing', { nodes: [node('hv1'), node('hv2'), node('hv3')], vms: [vm('vm1', 'start')] }, []],
  // plugin row
  ['plugin delta 0: nothing', { nodes: [node('hv1', { plugins: [plugin('disk', 0)] }), node('hv2')], vms: [] }, []],
  ['plugin delta 10 → fault delta 5', { nodes: [node('hv1', { plugins: [plugin('disk', 10)] }), node('hv2')], vms: [] }, ['NODE_PLUGIN_DISK_HV1/5']],
  ['plugin delta 1 → fault delta 0 (int(1/2))', { nodes: [node('hv1', { plugins: [plugin('dpkg', 1)] }), node('hv2')], vms: [] }, ['NODE_PLUGIN_DPKG_HV1/0']],
  ['plugin delta 51 → 25 (truncated)', { nodes: [node('hv1', { plugins: [plugin('load', 51)] }), node('hv2')], vms: [] }, ['NODE_PLUGIN_LOAD_HV1/25']],
  ['negative plugin delta: nothing', { nodes: [node('hv1', { plugins: [plugin('edac', -5)] }), node('hv2')], vms: [] }, []],
  ['every plugin of every node, sorted', {
    nodes: [node('hv2', { plugins: [plugin('nics', 20)] }), node('hv1', { plugins: [plugin('zkpr', 50), plugin('disk', 10)] })], vms: [],
  }, ['NODE_PLUGIN_DISK_HV1/5', 'NODE_PLUGIN_ZKPR_HV1/25', 'NODE_PLUGIN_NICS_HV2/10']],
  // dead node row
  ['daemonstate dead → DEAD_NODE 50', { nodes: [node('hv1'), node('hv2', { daemonState: 'dead' })], vms: [] }, ['DEAD_NODE_HV2/50']],
  ['daemonstate fenced → DEAD_NODE 50', { nodes: [node('hv1'), node('hv2', { daemonState: 'fenced' })], vms: [] }, ['DEAD_NODE_HV2/50']],
  ['daemonstate init/stop/shutdown/unknown: nothing', {
    nodes: [node('hv1', { daemonState: 'init' }), node('hv2', { daemonState: 'stop' }), node('hv3', { daemonState: 'shutdown' }), node('hv4', { daemonState: undefined })],
    vms: [],
  }, []],
  // Ceph OSD out row
  ['OSD stats in 0 → CEPH_OSD_OUT 50; in 1: nothing', { nodes: [node('hv1')], vms: [], osds: [osd('0', 1), osd('3', 0)] }, ['CEPH_OSD_OUT_3/50']],
  ['OSD stats unknown (absent, unreadable, the "|" placeholder): nothing', { nodes: [node('hv1')], vms: [], osds: [osd('1', undefined)] }, []],
  ['OSDs out in id order (numeric)', { nodes: [node('hv1')], vms: [], osds: [osd('10', 0), osd('2', 0)] }, ['CEPH_OSD_OUT_2/50', 'CEPH_OSD_OUT_10/50']],
  // Ceph health rows
  ['a HEALTH_WARN check → CEPH_WARN 10', { nodes: [node('hv1')], vms: [], cephChecks: [check('POOL_NO_REDUNDANCY', 'HEALTH_WARN')] }, ['CEPH_WARN_POOL_NO_REDUNDANCY/10']],
  ['a HEALTH_ERR check → CEPH_ERR 50', { nodes: [node('hv1')], vms: [], cephChecks: [check('OSD_FULL', 'HEALTH_ERR')] }, ['CEPH_ERR_OSD_FULL/50']],
  ['other severities: nothing', { nodes: [node('hv1')], vms: [], cephChecks: [check('X', 'HEALTH_OK'), check('Y', 'health_warn')] }, []],
  ['WARN rows then ERR rows, each by check name', {
    nodes: [node('hv1')], vms: [], cephChecks: [check('PG_DEGRADED', 'HEALTH_ERR'), check('OSD_DOWN', 'HEALTH_WARN'), check('MON_DOWN', 'HEALTH_WARN'), check('OSD_FULL', 'HEALTH_ERR')],
  }, ['CEPH_WARN_MON_DOWN/10', 'CEPH_WARN_OSD_DOWN/10', 'CEPH_ERR_OSD_FULL/50', 'CEPH_ERR_PG_DEGRADED/50']],
  ['no storage facts (storage not in use): nothing', { nodes: [node('hv1')], vms: [], osds: [], cephChecks: [] }, []],
  // VM row
  ['VM state fail → VM_FAILED 10', { nodes: [node('hv1'), node('hv2')], vms: [vm('web1', 'fail', 'libvirt error')] }, ['VM_FAILED_WEB1/10']],
  ['VM states other than fail: nothing', {
    nodes: [node('hv1'), node('hv2')], vms: ['start', 'stop', 'disable', 'migrate', 'provision', undefined].map((s, i) => vm(`vm${i}`, s)),
  }, []],
  ['VM without a name: its UUID stands in', { nodes: [node('hv1'), node('hv2')], vms: [vm('', 'fail', '', 'abcd-ef')] }, ['VM_FAILED_ABCD-EF/10']],
  ['two failed VMs with one name: one fault', { nodes: [node('hv1'), node('hv2')], vms: [vm('dup', 'fail', 'a', 'u1'), vm('dup', 'fail', 'b', 'u2')] }, ['VM_FAILED_DUP/10']],
  // VM no-target row (ours)
  ['VM stop + node_autostart True + recovery\'s no-target reason → VM_NO_TARGET 10', { nodes: [node('hv1'), node('hv3', { daemonState: 'run' })], vms: [waiting('web1')] }, ['VM_NO_TARGET_WEB1/10']],
  ['no-target reason but node_autostart False (an operator stopped it): nothing', { nodes: [node('hv1')], vms: [waiting('web1', { autostart: false })] }, []],
  ['stop + node_autostart True with another reason (a flush without target): nothing', { nodes: [node('hv1')], vms: [waiting('web1', { reason: 'migration aborted' }), waiting('web2', { reason: '' })] }, []],
  ['the prefix must start the reason', { nodes: [node('hv1')], vms: [waiting('web1', { reason: `x ${NO_TARGET}` })] }, []],
  ['started again (state start, the reason not yet cleared): nothing', { nodes: [node('hv1')], vms: [waiting('web1', { state: 'start' })] }, []],
  ['failed with the no-target reason: the failed row only', { nodes: [node('hv1')], vms: [waiting('web1', { state: 'fail' })] }, ['VM_FAILED_WEB1/10']],
  ['no-target VMs sorted by name with the failed ones', {
    nodes: [node('hv1')], vms: [waiting('b'), vm('c', 'fail'), waiting('a')],
  }, ['VM_NO_TARGET_A/10', 'VM_NO_TARGET_B/10', 'VM_FAILED_C/10']],
  // memory row: Σ alloc ≥ Σ total − max total
  ['memory: alloc below N-1 capacity: nothing', { nodes: [node('hv1', { memAllocMiB: 30_000 }), node('hv2', { memAllocMiB: 30_000 }), node('hv3')], vms: [] }, []],
  ['memory: alloc equal to N-1 capacity → overprovisioned', {
    nodes: [node('hv1', { memAllocMiB: 32_768 }), node('hv2', { memAllocMiB: 32_768 }), node('hv3')], vms: [],
  }, ['MEMORY_OVERPROVISIONED/50']],
  ['memory: the largest node is the one subtracted (120000 − 100000 ≤ 25000)', {
    nodes: [node('hv1', { memTotalMiB: 100_000, memAllocMiB: 1 }), node('hv2', { memTotalMiB: 10_000, memAllocMiB: 24_999 }), node('hv3', { memTotalMiB: 10_000 })], vms: [],
  }, ['MEMORY_OVERPROVISIONED/50']],
  ['memory: one node with VMs has no N-1 capacity → overprovisioned', { nodes: [node('hv1', { memAllocMiB: 1024 })], vms: [] }, ['MEMORY_OVERPROVISIONED/50']],
  ['memory: nothing allocated is never overprovisioned (all memtotal 0)', { nodes: [node('hv1', { memTotalMiB: 0 }), node('hv2', { memTotalMiB: 0 })], vms: [] }, []],
  ['memory: no nodes: nothing', { nodes: [], vms: [] }, []],
  // all rows together, in table order
  ['every row at once, in table order', {
    nodes: [node('hv1', { plugins: [plugin('psql', 50)], memAllocMiB: 70_000 }), node('hv2', { daemonState: 'fenced' })],
    vms: [vm('db', 'fail', 'x'), waiting('web')],
    osds: [osd('4', 0)], cephChecks: [check('MON_DOWN', 'HEALTH_ERR'), check('OSD_DOWN', 'HEALTH_WARN')],
  }, [
    'NODE_PLUGIN_PSQL_HV1/25', 'DEAD_NODE_HV2/50', 'CEPH_OSD_OUT_4/50', 'CEPH_WARN_OSD_DOWN/10', 'CEPH_ERR_MON_DOWN/50',
    'VM_FAILED_DB/10', 'VM_NO_TARGET_WEB/10', 'MEMORY_OVERPROVISIONED/50',
  ]],
];

describe('evaluateFaults(): the cluster fault table', () => {
  for (const [what, facts, want] of TABLE) {
    it(`${what} → ${want.join(', ') || 'nothing'}`, () => assert.deepEqual(brief(facts), want));
  }
});

describe('evaluateFaults(): messages', () => {
  it('plugin: node, plugin and the plugin\'s own message', () => {
    const facts = { nodes: [node('hv1', { plugins: [plugin('disk', 10, 'sda: 3 media errors')] }), node('hv2')], vms: [] };
    assert.deepEqual(messages(facts), ['Node hv1 plugin disk reports: sda: 3 media errors']);
  });
  it('dead node: the original\'s text', () => {
    assert.deepEqual(messages({ nodes: [node('hv1'), node('hv2', { daemonState: 'dead' })], vms: [] }), ['Node hv2 was dead and/or fenced']);
  });
  it('failed VM: with its failedreason, without a dangling colon when there is none', () => {
    const facts = { nodes: [node('hv1'), node('hv2')], vms: [vm('a', 'fail', 'no target node'), vm('b', 'fail', '  ')] };
    assert.deepEqual(messages(facts), ['VM a was failed: no target node', 'VM b was failed']);
  });
  it('no target: the VM and recovery\'s reason', () => {
    assert.deepEqual(messages({ nodes: [node('hv1')], vms: [waiting('web1')] }), [`VM web1 is stopped, waiting for a recovery target: ${NO_TARGET}`]);
  });
  it('OSD out: the original\'s text', () => {
    assert.deepEqual(messages({ nodes: [node('hv1')], vms: [], osds: [osd('3', 0)] }), ['OSD 3 was marked out']);
  });
  it('Ceph checks: severity, check and Ceph\'s summary, without a dangling colon when it is empty', () => {
    const facts = { nodes: [node('hv1')], vms: [], cephChecks: [check('POOL_NO_REDUNDANCY', 'HEALTH_WARN', '1 pool(s) have no replicas configured'), check('X', 'HEALTH_ERR', ' ')] };
    assert.deepEqual(messages(facts), ['HEALTH_WARN POOL_NO_REDUNDANCY reported by Ceph: 1 pool(s) have no replicas configured', 'HEALTH_ERR X reported by Ceph']);
  });
  it('memory: the figures compared', () => {
    const facts = { nodes: [node('hv1', { memAllocMiB: 40_000 }), node('hv2', { memTotalMiB: 16_384 })], vms: [] };
    assert.deepEqual(messages(facts), ['Cluster memory was overprovisioned: 40000MB >= 16384MB (N-1)']);
  });
});

describe('faultId()', () => {
  it('joins with _ and upper-cases, names included', () => {
    assert.equal(faultId('NODE_PLUGIN', 'disk', 'hv1'), 'NODE_PLUGIN_DISK_HV1');
    assert.equal(faultId('VM_FAILED', 'My-Vm.1'), 'VM_FAILED_MY-VM.1');
  });
});
