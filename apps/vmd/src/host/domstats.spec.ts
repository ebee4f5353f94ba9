import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, rejectionOf } from '@pvc/runtime';
import { liveDevices } from '../domain-xml.js';
import { VmdError } from '../errors.js';
import { vmStatsRecord } from '../vm-stats.js';
import { DOMSTATS_ARGS, domainStatsFrom, parseDomstats, readDomstats } from './domstats.js';
import { DOMSTATS_OUTPUT, LIVE_XML } from './stats-samples.js';

const U = 'aaaaaaaa-0000-0000-0000-000000000001';
/** `getInfo` of the sample's testvm. */
const INFO = { uuid: U, state: 'running', maxMemKiB: 4194304, memKiB: 4194304, vcpus: 4, cpuTimeNs: 2451183626000 } as const;

describe('parseDomstats', () => {
  it('splits the output into one record per domain, keyed by name', () => {
    const recs = parseDomstats(DOMSTATS_OUTPUT);
    assert.deepEqual(recs.map((r) => r.name), ['testvm', 'plain guest']);
    assert.equal(recs[0]?.fields.get('state.state'), '1');
    assert.equal(recs[0]?.fields.get('balloon.last-update'), '1712345671');
    assert.equal(recs[0]?.fields.get('block.2.path'), '/var/lib/libvirt/images/scratch.qcow2');
    assert.equal(recs[1]?.fields.size, 15);
  });
  it('keeps `=` inside a value, ignores text before the first header and lines without `=`', () => {
    const [r, ...rest] = parseDomstats('noise\nDomain: \'a\'\n  block.0.path=/x=y.img\n  garbage\n');
    assert.equal(rest.length, 0);
    assert.deepEqual([...(r?.fields ?? [])], [['block.0.path', '/x=y.img']]);
    assert.deepEqual(parseDomstats(''), []);
  });
});

describe('domainStatsFrom + vmStatsRecord: the original\'s stats JSON', () => {
  it('a PVC VM: every figure in the original\'s field names, disks by source, bridge interfaces only', () => {
    const [rec] = parseDomstats(DOMSTATS_OUTPUT);
    assert.ok(rec);
    assert.deepEqual(vmStatsRecord(domainStatsFrom(rec, INFO, liveDevices(LIVE_XML))), {
      state: 'RUNNING',
      maxmem: 4194304,
      livemem: 4194304,
      cpus: 4,
      cputime: 2451183626000,
      mem_stats: {
        actual: 4194304, swap_in: 0, swap_out: 0, major_fault: 1203, minor_fault: 98321456, unused: 2817648, available: 4028208,
        usable: 3402512, last_update: 1712345671, disk_caches: 701244, hugetlb_pgalloc: 0, hugetlb_pgfail: 0, rss: 2287364,
      },
      cpu_stats: { cpu_time: 2451183626000, user_time: 1847250000000, system_time: 412330000000 },
      disk_stats: [
        { name: 'vms/testvm_disk0', rd_req: 53817, rd_bytes: 1489437184, wr_req: 120877, wr_bytes: 2987651072, err: -1 },
        { name: '/var/lib/libvirt/images/scratch.qcow2', rd_req: 311, rd_bytes: 5361664, wr_req: 77, wr_bytes: 1048576, err: -1 },
      ],
      net_stats: [
        {
          name: 'vnet0', bridge: 'vmbr100', rd_bytes: 81725316, rd_packets: 612004, rd_errors: 0, rd_drops: 12,
          wr_bytes: 14227734, wr_packets: 99321, wr_errors: 0, wr_drops: 0,
        },
        { name: 'vnet1', bridge: 'vmbr200', rd_bytes: 5512, rd_packets: 61, rd_errors: 0, rd_drops: 0, wr_bytes: 2048, wr_packets: 18, wr_errors: 1, wr_drops: 2 },
      ],
    });
  });
  it('a guest without a balloon driver or devices: only what libvirt reports', () => {
    const rec = parseDomstats(DOMSTATS_OUTPUT)[1];
    assert.ok(rec);
    const info = { uuid: 'bbbbbbbb-0000-0000-0000-000000000002', state: 'running', maxMemKiB: 131072, memKiB: 131072, vcpus: 1, cpuTimeNs: 40213000000 } as const;
    const s = vmStatsRecord(domainStatsFrom(rec, info, liveDevices('<domain/>')));
    assert.deepEqual(s.mem_stats, { actual: 131072, rss: 98304 });
    assert.deepEqual([s.cpus, s.maxmem, s.disk_stats, s.net_stats], [1, 131072, [], []]);
  });
  it('groups libvirt skipped (--nowait, a busy domain) leave only their breakdown empty; unreported devices are left out', () => {
    const rec = parseDomstats("Domain: 'testvm'\n  state.state=1\n  block.count=0\n");
    assert.ok(rec[0]);
    const d = domainStatsFrom(rec[0], INFO, liveDevices(LIVE_XML));
    assert.deepEqual([d.maxMemKiB, d.vcpus, d.cpuTimeNs, d.disks, d.nets, d.memory, d.cpu], [4194304, 4, 2451183626000, [], [], {}, {}]);
  });
});

describe('readDomstats (virsh through Exec)', () => {
  it('runs virsh on the configured URI with the groups the stats need', async () => {
    const exec = new FakeExec().on('virsh', { stdout: DOMSTATS_OUTPUT });
    const recs = await readDomstats(exec, 'qemu:///system', 5000);
    assert.equal(recs.length, 2);
    assert.deepEqual(exec.calls[0]?.args, ['-c', 'qemu:///system', ...DOMSTATS_ARGS]);
  });
  it('maps virsh failures onto VmdError codes', async () => {
    const down = new FakeExec().on('virsh', { exitCode: 1, stderr: "error: failed to connect to the hypervisor\nerror: Failed to connect socket to '/var/run/libvirt/libvirt-sock': No such file or directory\n" });
    const e1 = await rejectionOf(readDomstats(down, 'qemu:///system', 5000), VmdError);
    assert.equal(e1.code, 'LIBVIRT_UNAVAILABLE');
    assert.match(e1.message, /^virsh domstats: failed to connect to the hypervisor; /);
    const other = new FakeExec().on('virsh', { exitCode: 1, stderr: 'error: unsupported flags (0x80000000)\n' });
    assert.equal((await rejectionOf(readDomstats(other, 'qemu:///system', 5000), VmdError)).code, 'LIBVIRT_ERROR');
  });
});
