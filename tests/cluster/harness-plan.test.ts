import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterError, parseMode, planCluster, quorumFrom } from './harness/index.js';
import type { ZkServerStatus } from './harness/index.js';
import { lanConf, serviceScript } from './harness/configs.js';
import { zooCfg } from './harness/zookeeper.js';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestDomainXml, resolveNetModules } from '../support/guest/index.js';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { waitUntil } from '../support/wait.js';
import { fakeModulesDir } from '../support/guest/modules-fixture.js';
import { cephMounts, clusterCephConf, unitServiceName } from './harness/ceph-plan.js';
import { SH_DIR } from './harness/run.js';

// Pure parts of the cluster harness: no root, no processes.
describe('cluster harness plan and configs (pure)', () => {
  it('plans names ≤ 15 chars, one /24 per network and coordinators first', () => {
    const p = planCluster({ name: 'abcdef', hosts: 9, coordinators: 3, subnet: 5 });
    assert.equal(p.networks.cluster.prefix, '10.200.20');
    assert.equal(p.networks.ipmi.prefix, '10.200.23');
    assert.equal(p.networks.upstream.bridge, 'abcdef-upstream');
    for (const h of p.hosts) {
      for (const v of Object.values(h.veths)) assert.ok(v.length <= 15, v);
    }
    assert.deepEqual(p.hosts.filter((h) => h.coordinator).map((h) => h.name), ['hv1', 'hv2', 'hv3']);
    assert.equal(p.hosts[8]!.ips.storage, '10.200.21.9');
    assert.notEqual(p.hosts[0]!.uuid, p.hosts[1]!.uuid);
    assert.ok(Object.isFrozen(p));
  });

  it('rejects bad options naming the key', () => {
    assert.throws(() => planCluster({ name: 'Bad-Name' }), (e: unknown) => e instanceof ClusterError && /"name"/.test(e.message));
    assert.throws(() => planCluster({ hosts: 3, coordinators: 2 }), /"coordinators".*odd/);
    assert.throws(() => planCluster({ hosts: 0 }), /"hosts"/);
    assert.throws(() => planCluster({ workDir: '/tmp/has space' }), /"workDir"/);
  });

  it('decides quorum from srvr modes', () => {
    const s = (...modes: ZkServerStatus['mode'][]): ZkServerStatus[] =>
      modes.map((mode, i) => ({ id: i + 1, host: `hv${i + 1}`, address: '', mode }));
    assert.equal(quorumFrom(s('leader', 'follower', 'down')), true);
    assert.equal(quorumFrom(s('leader', 'down', 'down')), false);
    assert.equal(quorumFrom(s('follower', 'follower', 'follower')), false);
    assert.equal(quorumFrom(s('standalone')), true);
    assert.equal(parseMode('Zookeeper version: 3.8.0\nMode: leader\nNode count: 5\n'), 'leader');
    assert.equal(parseMode('This ZooKeeper instance is not currently serving requests'), 'down');
  });

  it('writes zoo.cfg, lan.conf and service scripts for a host', () => {
    const p = planCluster({ name: 'pvcu', subnet: 1 });
    const hv2 = p.hosts[1]!;
    const zoo = zooCfg(p, hv2);
    assert.match(zoo, /^clientPortAddress=0\.0\.0\.0$/m); // inside the host's netns only
    assert.match(zoo, /^server\.3=10\.200\.4\.3:2888:3888$/m);
    assert.match(zoo, /^4lw\.commands\.whitelist=\*$/m);
    const lan = lanConf(p, hv2);
    assert.match(lan, /addr 10\.200\.7\.2 623/);
    assert.match(lan, /chassis_control ".*chassis-control\.sh \/tmp\/pvc-cluster\/pvcu\/hosts\/hv2 0x20"/);
    const svc = serviceScript(hv2, 'x', 'echo', ["it's"], { A: 'b c' });
    assert.match(svc, /^export A='b c'$/m);
    assert.match(svc, /^exec echo 'it'\\''s'$/m);
  });

  it('builds a diskless TCG domain whose serial console is logged', () => {
    const xml = guestDomainXml({ name: 'vm1', kernel: '/k', initrd: '/i', consoleLog: '/c/vm1.log' });
    assert.match(xml, /<domain type='qemu'>/);
    assert.match(xml, /<memory unit='MiB'>128<\/memory>/);
    assert.match(xml, /<cmdline>console=ttyS0 .*pvc\.name=vm1<\/cmdline>/);
    assert.match(xml, /<serial type='pty'>\s*<log file='\/c\/vm1\.log' append='on'\/>/);
    assert.doesNotMatch(xml, /<disk|<interface/);
    assert.match(guestDomainXml({ name: 'v', kernel: '/k', initrd: '/i', consoleLog: '/c', domainType: 'kvm', vcpus: 2 }), /type='kvm'[\s\S]*<vcpu>2</);
    assert.throws(() => guestDomainXml({ name: 'bad name', kernel: '/k', initrd: '/i', consoleLog: '/c' }), /guest name/);
  });

  it('gives the guest virtio NICs on host bridges and extra kernel arguments when asked', () => {
    const xml = guestDomainXml({
      name: 'vm1', kernel: '/k', initrd: '/i', consoleLog: '/c', cmdline: 'pvc.net=dhcp pvc.ping=10.1.0.1,10.1.0.12',
      interfaces: [{ bridge: 'vmbr1200', mac: '52:54:00:12:00:0A' }],
    });
    assert.match(xml, /<cmdline>console=ttyS0 .*pvc\.name=vm1 pvc\.net=dhcp pvc\.ping=10\.1\.0\.1,10\.1\.0\.12<\/cmdline>/);
    assert.match(xml, /<interface type='bridge'>\s*<source bridge='vmbr1200'\/>\s*<mac address='52:54:00:12:00:0a'\/>\s*<model type='virtio'\/>/);
    assert.throws(() => guestDomainXml({ name: 'v', kernel: '/k', initrd: '/i', consoleLog: '/c', interfaces: [{ bridge: 'vmbr1', mac: '52:54:00' }] }), /MAC/);
    assert.throws(() => guestDomainXml({ name: 'v', kernel: '/k', initrd: '/i', consoleLog: '/c', cmdline: "x'; reboot" }), /cmdline/);
  });

  it('finds the virtio NIC modules through modules.dep, dependencies first; says why when it cannot', () => {
    const dir = fakeModulesDir([
      'kernel/drivers/virtio/virtio_ring.ko:',
      'kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko',
      'kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
      'kernel/net/core/failover.ko.xz:',
      'kernel/drivers/net/virtio_net.ko: kernel/net/core/failover.ko.xz kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
    ]);
    try {
      const r = resolveNetModules(dir);
      assert.ok('modules' in r);
      assert.deepEqual(r.modules.map((m) => m.name), ['virtio_ring', 'virtio', 'virtio_pci', 'failover', 'virtio_net']);
      assert.equal(r.modules.find((m) => m.name === 'failover')?.compression, 'xz');
      // A driver built into the kernel needs no file; one neither in modules.dep nor built in is named.
      writeFileSync(join(dir, 'modules.dep'), 'kernel/drivers/virtio/virtio_pci.ko:\n');
      writeFileSync(join(dir, 'modules.builtin'), 'kernel/drivers/net/virtio_net.ko\n');
      const builtin = resolveNetModules(dir);
      assert.deepEqual('modules' in builtin ? builtin.modules.map((m) => m.name) : builtin, ['virtio_pci']);
      writeFileSync(join(dir, 'modules.builtin'), '');
      assert.match(JSON.stringify(resolveNetModules(dir)), /module virtio_net .*neither in modules\.dep nor built in/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.match(JSON.stringify(resolveNetModules('/nonexistent')), /unavailable.*modules\.dep/);
  });

  it('plans Ceph only when asked: mons and mgrs on the coordinators, an OSD per host, size 3 / min_size 2', () => {
    assert.equal(planCluster({ name: 'pvcu', subnet: 1 }).ceph, undefined);
    assert.throws(() => planCluster({ ceph: 'yes' as unknown as boolean }), /invalid cluster option "ceph"/);
    const p = planCluster({ name: 'pvcu', subnet: 1, hosts: 4, coordinators: 3, ceph: true });
    const c = p.ceph!;
    assert.deepEqual(c.mons.map((m) => [m.name, m.ip]), [['hv1', '10.200.5.1'], ['hv2', '10.200.5.2'], ['hv3', '10.200.5.3']]);
    assert.deepEqual(c.mgrs.map((m) => m.name), ['hv1', 'hv2', 'hv3']);
    assert.deepEqual(c.osds.map((o) => [o.id, o.host, o.ip]), [[0, 'hv1', '10.200.5.1'], [1, 'hv2', '10.200.5.2'], [2, 'hv3', '10.200.5.3'], [3, 'hv4', '10.200.5.4']]);
    assert.deepEqual([c.pool, c.size, c.minSize, c.confPath], ['vms', 3, 2, '/tmp/pvc-cluster/pvcu/ceph/etc/ceph.conf']);
    assert.deepEqual([planCluster({ hosts: 1, ceph: true }).ceph!.size, planCluster({ hosts: 1, ceph: true }).ceph!.minSize], [1, 1]);
    assert.deepEqual([planCluster({ hosts: 2, coordinators: 1, ceph: true }).ceph!.size, planCluster({ hosts: 2, coordinators: 1, ceph: true }).ceph!.minSize], [2, 1]);
    const conf = clusterCephConf(c);
    assert.match(conf, /^mon host = \[v2:10\.200\.5\.1:3300,v1:10\.200\.5\.1:6789\],\[v2:10\.200\.5\.2:3300/m);
    assert.match(conf, /^public network = 10\.200\.5\.0\/24$/m);
    assert.match(conf, /^auth client required = none$/m);
    assert.match(conf, /^osd pool default size = 3$/m);
    assert.match(conf, /^osd crush chooseleaf type = 1$/m);
    assert.match(conf, /^osd heartbeat grace = 3$/m);
    assert.match(conf, /^objecter timeout = 2$/m);
    assert.match(conf, /^\[osd\.3\]\npublic addr = 10\.200\.5\.4$/m);
    assert.match(conf, /^\[mgr\.hv2\]\npublic addr = 10\.200\.5\.2$/m);
    assert.match(conf, /^osd data = \/var\/lib\/ceph\/osd\/ceph-\$id$/m);
    assert.match(conf, /^bluestore block path = \/var\/lib\/ceph\/osd\/ceph-\$id\.block$/m);
    assert.deepEqual(cephMounts(c, p.hosts[1]!), [
      '/tmp/pvc-cluster/pvcu/ceph/etc /etc/ceph',
      '/tmp/pvc-cluster/pvcu/hosts/hv2/fs/var-lib-ceph /var/lib/ceph',
      '/tmp/pvc-cluster/pvcu/hosts/hv2/fs/var-log-ceph /var/log/ceph',
      '/tmp/pvc-cluster/pvcu/hosts/hv2/fs/run-ceph /run/ceph',
    ]);
    assert.equal(unitServiceName('ceph-mon@hv1.service'), 'ceph-mon-hv1');
  });

  it('the systemctl shim: starts a unit script, answers a running service, a stand-in, refuses unknown units and verbs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvc-shim-'));
    try {
      for (const d of ['units', 'services', 'run/svc', 'log']) mkdirSync(join(dir, d), { recursive: true });
      // A unit that records it ran (and its pid, as the harness's service scripts do).
      writeFileSync(join(dir, 'units', 'ceph-mon-hv1.sh'), `echo $$ >${dir}/run/svc/ceph-mon-hv1.pid\necho started >${dir}/mon-ran\nexec sleep 30\n`);
      writeFileSync(join(dir, 'services', '30-zookeeper.sh'), 'echo never >/dev/null\n');
      writeFileSync(join(dir, 'run', 'svc', 'zookeeper.pid'), `${process.pid}\n`); // alive: "already running"
      writeFileSync(join(dir, 'units', 'frr.stand-in'), 'FRR is not installed here\n');
      const shim = (...args: string[]) => spawnSync('bash', [join(SH_DIR, 'systemctl-shim.sh'), dir, ...args], { encoding: 'utf8' });
      assert.equal(shim('start', 'ceph-mon@hv1.service').status, 0);
      assert.equal(shim('start', 'zookeeper.service').status, 0);
      assert.equal(shim('start', 'frr.service').status, 0);
      const missing = shim('start', 'patroni.service');
      assert.equal(missing.status, 5);
      assert.match(missing.stderr, /Unit patroni\.service not found\./);
      const stop = shim('stop', 'zookeeper.service');
      assert.equal(stop.status, 1);
      assert.match(stop.stderr, /only 'start <unit>' is supported/);
      await waitUntil(() => existsSync(join(dir, 'mon-ran')), { what: 'the unit script started by the shim', timeoutMs: 10_000 });
      const pid = Number(readFileSync(join(dir, 'run', 'svc', 'ceph-mon-hv1.pid'), 'utf8').trim());
      assert.ok(pid > 0, 'the unit script ran and wrote its pid');
      assert.equal(shim('start', 'ceph-mon@hv1.service').status, 0, 'a second start of a running unit');
      const log = readFileSync(join(dir, 'log', 'systemctl.log'), 'utf8');
      assert.match(log, /start ceph-mon@hv1\.service: started .*units\/ceph-mon-hv1\.sh/);
      assert.match(log, /start zookeeper\.service: already running/);
      assert.match(log, /start frr\.service: stand-in, not run in the test cluster \(FRR is not installed here/);
      assert.match(log, /start patroni\.service: not found/);
      assert.match(log, /start ceph-mon@hv1\.service: already running \(pid \d+\)/);
      process.kill(pid, 'SIGKILL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
