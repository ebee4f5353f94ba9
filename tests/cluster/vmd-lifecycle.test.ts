/**
 * vmd against a real libvirtd (one harness host, TCG guests) and real Zookeeper: the lifecycle
 * rows, failures, SIGKILL of vmd, and getResources over the unix socket. VM state is checked with
 * virsh, never with ZK alone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import { VMD, rpcClient, socketPath, unixTarget } from '@pvc/rpc';
import { connectZk, newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { createCluster, missingPrerequisites, waitFor } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import { startVmdProcess, type VmdProcess } from '../integration/vmd/vmd-process.js';

const NAME = 'vmdt';
const uuid = (n: number): string => `0000000${n}-1111-2222-3333-444444444444`;

describe('vmd with real libvirtd + ZK [root only]', () => {
  let cluster: Cluster;
  let hv1: ClusterHost;
  let zk: ZkClient;
  let dir: string;
  let vmd: VmdProcess | undefined;

  const spawnVmd = (): VmdProcess =>
    startVmdProcess({ dir, node: 'hv1', hosts: { hv1: hv1.clusterIp }, libvirtUri: hv1.libvirtUri, shutdownTimeoutS: 3 });
  const domstate = async (u: string): Promise<string> => {
    const r = await hv1.virsh(['domstate', u]);
    return r.exitCode === 0 ? r.stdout.trim() : 'absent';
  };
  const domid = async (u: string): Promise<string> => (await hv1.virsh(['domid', u])).stdout.trim();
  const waitDom = (u: string, want: string, ms = 20_000): Promise<unknown> =>
    waitFor(`${u} ${want} in libvirt`, ms, async () => ((await domstate(u)) === want ? true : undefined), 100);
  const waitZk = (key: string, want: string, ms = 20_000): Promise<unknown> =>
    waitFor(`${key} = ${want}`, ms, async () => ((await zk.read(key)) === want ? true : undefined), 100);
  const define = async (n: number, state: string, xml?: string, node = 'hv1'): Promise<string> => {
    const u = uuid(n);
    const d = newDomainObject({ uuid: u, name: `vm${n}`, node, state, xml: xml ?? cluster.guest.domainXml(`vm${n}`, { uuid: u, memoryMiB: 96 }) });
    await zk.createObject(d.root, d.entries);
    return u;
  };
  const setState = (u: string, s: string): Promise<void> => zk.write([[paths.domain(u).state, s]]);

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    cluster = await createCluster({ name: NAME, hosts: 1, coordinators: 1 });
    hv1 = cluster.hosts[0]!;
    dir = mkdtempSync(join(tmpdir(), 'pvc-vmd-'));
    zk = await connectZk({ hosts: cluster.zk.connectString.split(','), clock: realClock });
    for (const p of [paths.nodes, paths.domains]) await zk.ensurePath(p);
    for (const name of ['hv1', 'hv2']) {
      const n = newNodeObject({ name, daemonMode: 'coordinator', nowMs: realClock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
      await zk.createObject(n.root, n.entries);
      await zk.write([[paths.node(name).domainState, 'ready'], [paths.node(name).daemonState, 'run']]);
    }
    vmd = spawnVmd();
  });

  after(async () => {
    vmd?.child.kill('SIGKILL');
    await vmd?.exited;
    await zk?.close();
    await cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('state start assigned here → the domain runs (virsh); timing logged', async () => {
    const t0 = realClock.now();
    const u = await define(1, 'start');
    await waitDom(u, 'running');
    console.log(`start latency (state=start written → virsh running): ${realClock.now() - t0} ms`);
    assert.equal(await zk.read(paths.domain(u).failedReason), '');
  });

  it('stats: the running guest gets the original\'s stats JSON from the real libvirtd (virsh domstats)', async () => {
    const u = uuid(1);
    type Stats = { state: string; maxmem: number; livemem: number; cpus: number; cputime: number; mem_stats: Record<string, number>; cpu_stats: Record<string, number>; disk_stats: { name: string; rd_req: number; rd_bytes: number; wr_req: number; wr_bytes: number; err: number }[]; net_stats: unknown[] };
    const stats = await waitFor('vm1 stats with state RUNNING', 20_000, async () => {
      const raw = await zk.read(paths.domain(u).stats);
      if (!raw) return undefined;
      const s = JSON.parse(raw) as Stats;
      return s.state === 'RUNNING' && s.cputime > 0 ? s : undefined;
    }, 200) as Stats;
    console.log(`stats of vm1: ${JSON.stringify(stats).slice(0, 600)}`);
    assert.equal(stats.maxmem, 96 * 1024, 'maxmem in KiB as libvirt reports it');
    assert.ok(stats.livemem > 0 && stats.cpus >= 1);
    assert.ok(typeof stats.mem_stats === 'object' && stats.mem_stats !== null);
    assert.ok(stats.cpu_stats.cpu_time !== undefined && stats.cpu_stats.cpu_time > 0, 'cpu_stats.cpu_time');
    assert.ok(Array.isArray(stats.disk_stats) && Array.isArray(stats.net_stats));
    for (const d of stats.disk_stats) assert.deepEqual(Object.keys(d).sort(), ['err', 'name', 'rd_bytes', 'rd_req', 'wr_bytes', 'wr_req']);
  });

  it('stop destroys and writes stop; start again; restart gives a new domain id; shutdown; disable', async () => {
    const u = uuid(1);
    await setState(u, 'stop');
    await waitDom(u, 'absent');
    await waitZk(paths.domain(u).state, 'stop');
    await setState(u, 'start');
    await waitDom(u, 'running');
    const id1 = await domid(u);
    await setState(u, 'restart'); // the test guest ignores ACPI: destroyed after vm_shutdown_timeout (3 s), then start
    await waitZk(paths.domain(u).state, 'start', 30_000);
    await waitDom(u, 'running');
    assert.notEqual(await domid(u), id1, 'restart made a new domain');
    await setState(u, 'shutdown');
    await waitZk(paths.domain(u).state, 'stop', 30_000);
    assert.equal(await domstate(u), 'absent');
    await setState(u, 'disable');
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(await domstate(u), 'absent', 'disable starts nothing');
  });

  it('a broken XML → fail with libvirt\'s message; a VM libvirt refuses → fail; the other VM still starts', async () => {
    const bad = await define(2, 'start', "<domain type='qemu'><name>vm2</name><uuid>00000002-1111-2222-3333-444444444444</uuid><memory>65536</memory>");
    const refused = await define(3, 'start', cluster.guest.domainXml('vm3', { uuid: uuid(3) }).replace('/usr/bin/qemu-system-x86_64', '/nonexistent/qemu'));
    const good = await define(4, 'start');
    await waitZk(paths.domain(bad).state, 'fail');
    await waitZk(paths.domain(refused).state, 'fail');
    assert.match((await zk.read(paths.domain(bad).failedReason)) ?? '', /Premature end of data|Opening and ending tag|domain_definition/);
    assert.match((await zk.read(paths.domain(refused).failedReason)) ?? '', /nonexistent/);
    await waitDom(good, 'running');
    await setState(uuid(1), 'start');
    await waitDom(uuid(1), 'running');
  });

  it('getResources over the unix socket returns the running UUIDs and memory', async () => {
    const client = rpcClient(unixTarget(socketPath(join(dir, 'run'), 'vmd')), VMD);
    try {
      const want = [uuid(1), uuid(4)].sort();
      const res = await waitFor('getResources lists vm1 and vm4', 10_000, async () => {
        const r = await client.getResources({}, { deadlineMs: 1000 });
        return JSON.stringify(r.runningDomains) === JSON.stringify(want) ? r : undefined;
      }, 200);
      assert.equal(Number(res.memAllocMib), 2 * 96);
      assert.equal(res.vcpuAlloc, 2);
      assert.ok(Number(res.memProvMib) >= 2 * 96 + 96, 'stopped vm2/vm3 assigned here count in memprov');
      const stats = JSON.parse((await waitFor('stats written', 10_000, async () => (await zk.read(paths.domain(uuid(1)).stats)) || undefined, 200)) as string) as Record<string, unknown>;
      assert.equal(stats.state, 'RUNNING', 'the original\'s spelling (libvirt_vm_states)');
      assert.equal(stats.maxmem, 96 * 1024);
    } finally {
      client.close();
    }
  });

  it('SIGKILL vmd → VMs keep running; a new vmd converges without starting them again', async () => {
    const ids = [await domid(uuid(1)), await domid(uuid(4))];
    vmd!.child.kill('SIGKILL');
    await vmd!.exited;
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await domstate(uuid(1)), 'running');
    assert.equal(await domstate(uuid(4)), 'running');
    const u5 = await define(5, 'start'); // written while no vmd runs
    vmd = spawnVmd();
    await waitDom(u5, 'running', 30_000);
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual([await domid(uuid(1)), await domid(uuid(4))], ids, 'same domains, not started again');
    assert.doesNotMatch(vmd.output(), /already active/);
  });

  it('a domain running here that ZK assigns to hv2 is destroyed; an unknown state is only logged', async () => {
    await zk.write([[paths.domain(uuid(4)).node, 'hv2']]);
    await waitDom(uuid(4), 'absent');
    assert.equal(await zk.read(paths.domain(uuid(4)).state), 'start', 'no state write for a VM assigned elsewhere');
    await setState(uuid(5), 'bogus');
    await waitFor('unknown state logged', 10_000, async () => (/unknown value \\"bogus\\"/.test(vmd!.output()) ? true : undefined), 200);
    assert.equal(await domstate(uuid(5)), 'running', 'left alone');
    assert.match(vmd!.output(), /"vm":"vm5"/);
  });

  it('SIGTERM: vmd exits 0 and leaves the VMs running', async () => {
    vmd!.child.kill('SIGTERM');
    assert.equal(await vmd!.exited, 0, vmd!.output().slice(-2000));
    vmd = undefined;
    assert.equal(await domstate(uuid(1)), 'running');
    assert.equal(await domstate(uuid(5)), 'running');
  });
});
