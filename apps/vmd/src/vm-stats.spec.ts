import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statsToWrite, vmStatsRecord, type DomainStats } from './vm-stats.js';

const base: DomainStats = {
  uuid: 'u1', state: 'running', maxMemKiB: 2048, memKiB: 1024, vcpus: 2, cpuTimeNs: 5,
  memory: { actual: 1024 }, cpu: { cpuTimeNs: 5 }, disks: [], nets: [],
};

describe('vmStatsRecord', () => {
  it('has exactly the original\'s top-level fields; absent CPU figures are left out, not 0', () => {
    const r = vmStatsRecord(base);
    assert.deepEqual(Object.keys(r), ['state', 'maxmem', 'livemem', 'cpus', 'cputime', 'mem_stats', 'cpu_stats', 'disk_stats', 'net_stats']);
    assert.deepEqual(r.cpu_stats, { cpu_time: 5 });
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r, 'plain JSON');
  });
  it('spells states as the original\'s libvirt_vm_states table (upper case)', () => {
    for (const [state, want] of [['running', 'RUNNING'], ['pmsuspended', 'PMSUSPENDED'], ['nostate', 'NOSTATE']] as const) {
      assert.equal(vmStatsRecord({ ...base, state }).state, want);
    }
  });
});

describe('statsToWrite', () => {
  it('only running domains PVC knows (a paused one and a foreign one get no record)', () => {
    const stats: DomainStats[] = [base, { ...base, uuid: 'u2', state: 'paused' }, { ...base, uuid: 'foreign' }];
    assert.deepEqual(statsToWrite(stats, new Set(['u1', 'u2'])).map(([u]) => u), ['u1']);
  });
});
