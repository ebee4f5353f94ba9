import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { captureLogger, VirtualClock } from '@pvc/runtime';
import { paths, resetBadValueReports, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { seedBase, seedDomain, seedNode } from '../testing/cluster.js';
import { buildSamples, exposition } from './build.js';
import { startMetricsServer } from './server.js';
import { readMetricsInput } from './source.js';

const T0 = 1_700_000_000_000;
const VM1 = 'aaaaaaaa-0000-4000-8000-000000000001';
const VM2 = 'aaaaaaaa-0000-4000-8000-000000000002';
const NET = '{"eth0":{"rx_bps":1000,"tx_bps":3000,"rx_pps":10,"tx_pps":30,"total_bps":4000,"link_speed":10000,"state":"up"}}';
const STATS = JSON.stringify({
  state: 'RUNNING', maxmem: 1048576, livemem: 1048576, cpus: 2, cputime: 5e9,
  mem_stats: { actual: 1048576, rss: 300000 }, cpu_stats: { cpu_time: 5e9, user_time: 3e9, system_time: 1e9 },
  disk_stats: [], net_stats: [],
});

async function cluster(): Promise<{ zk: ZkClient; log: ReturnType<typeof captureLogger> }> {
  resetBadValueReports();
  const zk = await new FakeZkServer({ clock: new VirtualClock(T0) }).connect();
  await seedBase(zk, { primary: 'hv1' });
  await seedNode(zk, T0, { name: 'hv1', mode: 'coordinator', routerState: 'primary', memTotalMiB: 32_768, memUsedMiB: 8_192, cpus: 8 });
  await seedNode(zk, T0, { name: 'hv2', mode: 'coordinator', memTotalMiB: 16_384, memUsedMiB: 4_096, cpus: 4 });
  await seedNode(zk, T0, { name: 'hv3', mode: 'coordinator', daemonState: 'dead', domainState: 'fence-flush', cpus: 4 });
  await seedDomain(zk, { uuid: VM1, name: 'web', node: 'hv1', state: 'start' });
  await seedDomain(zk, { uuid: VM2, name: 'db', node: 'hv2', state: 'migrate-live' });
  const n = paths.node('hv1');
  await zk.write([
    [n.cpuLoad, '2.0'], [n.memAlloc, '4096'], [n.memProv, '6144'], [n.networkStats, NET], [n.monitoringHealth, '90'],
    [paths.node('hv2').cpuLoad, '1.0'], [paths.node('hv3').cpuLoad, '0.0'],
    [paths.domain(VM1).stats, STATS],
  ]);
  return { zk, log: captureLogger('keepaliled') };
}

const read = (zk: ZkClient, node: string, log: ReturnType<typeof captureLogger>) =>
  readMetricsInput({ zk, node, version: '0.1.0', logger: log.logger, timeoutMs: 1_000 });

/** The value of the sample `name{labels}` in an exposition, or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels === '' ? ' ' : `{${labels}`}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics builder', () => {
  it('the primary serves the cluster-wide set and its own node figures, with the original names and labels', async () => {
    const { zk, log } = await cluster();
    const text = await exposition(buildSamples(await read(zk, 'hv1', log)));
    assert.match(text, /# HELP pvc_info PVC cluster information\n# TYPE pvc_info gauge\npvc_info\{primary_node="hv1",version="0.1.0",upstream_ip=""\} 1/);
    assert.equal(sample(text, 'pvc_nodes'), 3);
    assert.equal(sample(text, 'pvc_vms'), 2);
    assert.equal(sample(text, 'pvc_cluster_health'), 100);
    assert.equal(sample(text, 'pvc_cluster_maintenance'), 0);
    assert.equal(sample(text, 'pvc_node_daemon_states', 'state="dead"'), 1);
    assert.equal(sample(text, 'pvc_node_daemon_states', 'state="fenced"'), 0);
    assert.equal(sample(text, 'pvc_node_domain_states', 'state="fence-flush"'), 1);
    assert.equal(sample(text, 'pvc_vm_states', 'state="migrate-live"'), 1);
    assert.equal(sample(text, 'pvc_vm_state', 'vm="db",state="migrate-live"'), 11);
    assert.equal(sample(text, 'pvc_vm_active_node', 'vm="web",node="hv1"'), 1);
    assert.equal(sample(text, 'pvc_vm_memory', 'vm="web"'), 1024);
    assert.equal(sample(text, 'pvc_vm_vcpus_cpu_time', 'vm="web"'), 5000);
    assert.equal(sample(text, 'pvc_vm_memory_stats_rss', 'vm="web"'), 300000);
    assert.equal(sample(text, 'pvc_vm_memory_stats_swap_in', 'vm="web"'), 0, 'a statistic libvirt left out counts 0 once stats exist (the original)');
    assert.equal(sample(text, 'pvc_vm_vcpus_cpu_time', 'vm="db"'), undefined, 'no stats written: no counters');
    // CPU n-1: loads 3.0 over the 4+4 CPUs left without the largest node.
    assert.equal(sample(text, 'pvc_cluster_cpu_utilization'), 37.5);
    assert.equal(sample(text, 'pvc_node_health', 'node="hv1"'), 90);
    assert.equal(sample(text, 'pvc_node_load_average', 'node="hv1"'), 2);
    assert.equal(sample(text, 'pvc_node_cpu_utilization', 'node="hv1"'), 25);
    assert.equal(sample(text, 'pvc_node_used_memory_utilization', 'node="hv1"'), 25);
    assert.equal(sample(text, 'pvc_node_network_traffic_tx', 'node="hv1"'), 3000);
    assert.equal(sample(text, 'pvc_node_network_utilization', 'node="hv1"'), 20);
    assert.equal(sample(text, 'pvc_node_used_memory', 'node="hv2"'), undefined, 'other nodes serve their own figures');
    assert.equal(log.lines.filter((l) => Number(l.level) >= 40).length, 0);
  });

  it('another node serves only its own node figures', async () => {
    const { zk, log } = await cluster();
    const text = await exposition(buildSamples(await read(zk, 'hv2', log)));
    assert.equal(sample(text, 'pvc_node_used_memory', 'node="hv2"'), 4096);
    assert.equal(sample(text, 'pvc_info', 'primary_node="hv1"'), undefined);
    assert.doesNotMatch(text, /pvc_vm_|pvc_nodes|pvc_cluster_/);
  });

  it('/metrics/health and /metrics/resource split the families as the original did', async () => {
    const { zk, log } = await cluster();
    const samples = buildSamples(await read(zk, 'hv1', log));
    const health = await exposition(samples, 'health');
    const resource = await exposition(samples, 'resource');
    assert.match(health, /^pvc_cluster_health /m);
    assert.match(health, /^pvc_node_health\{/m);
    assert.doesNotMatch(health, /pvc_vm_memory|pvc_node_used_memory/);
    assert.match(resource, /^pvc_vm_memory\{/m);
    assert.doesNotMatch(resource, /pvc_info|pvc_vm_states/);
  });

  it('a malformed value gives no sample for what it feeds and a log line naming the key, never a default', async () => {
    const { zk, log } = await cluster();
    const n = paths.node('hv1');
    await zk.write([
      [n.memTotal, 'lots'], [n.cpuLoad, 'high'], [n.networkStats, '{"eth0":{"rx_bps":"fast"}}'],
      [paths.domain(VM1).stats, '{"mem_stats":{"rss":"big"},"cpu_stats":{"cpu_time":7e6}}'],
      [paths.domain(VM2).state, 'flying'],
    ]);
    const text = await exposition(buildSamples(await read(zk, 'hv1', log)));
    for (const name of ['pvc_node_total_memory', 'pvc_node_used_memory_utilization', 'pvc_node_load_average', 'pvc_node_cpu_utilization', 'pvc_node_network_traffic_rx']) {
      assert.equal(sample(text, name, 'node="hv1"'), undefined, name);
    }
    // Cluster figures that need the bad values are left out; the rest stay.
    assert.equal(sample(text, 'pvc_cluster_cpu_utilization'), undefined);
    assert.equal(sample(text, 'pvc_cluster_memory_real_utilization'), undefined);
    assert.equal(sample(text, 'pvc_node_used_memory', 'node="hv1"'), 8192);
    assert.equal(sample(text, 'pvc_vm_memory_stats_rss', 'vm="web"'), undefined);
    assert.equal(sample(text, 'pvc_vm_vcpus_cpu_time', 'vm="web"'), 7);
    assert.equal(sample(text, 'pvc_vm_state', 'vm="db"'), undefined);
    assert.equal(sample(text, 'pvc_vms'), 2);
    const warned = log.lines.filter((l) => l.level === 40).map((l) => String(l.key));
    for (const key of [n.memTotal, n.cpuLoad, n.networkStats, paths.domain(VM1).stats, paths.domain(VM2).state]) {
      assert.ok(warned.includes(key), `a warning names ${key}: ${warned.join(', ')}`);
    }
  });

  it('storage: OSD and pool figures from the stored stats, rates read from Ceph\'s text', async () => {
    const { zk, log } = await cluster();
    const o = paths.ceph.osd(0);
    const p = paths.ceph.pool('vms');
    await zk.write([
      [o.root, ''], [o.node, 'hv1'], [o.device, '/dev/sdb'], [o.dbDevice, ''],
      [o.stats, JSON.stringify({ up: 1, in: 1, utilization: 12.5, kb: 1000, kb_used: 125, class: 'hdd', wr_ops: '3', wr_data: '4.0k', rd_ops: '0', rd_data: '1M' })],
      [p.root, ''], [p.pgs, '32'], [p.tier, 'default'], [p.stats, JSON.stringify({ used_percent: 0.25, num_objects: 7 })],
    ]);
    const text = await exposition(buildSamples(await read(zk, 'hv1', log)));
    assert.equal(sample(text, 'pvc_ceph_osd_up_states', 'state="up"'), 1);
    assert.equal(sample(text, 'pvc_ceph_osd_used', 'osd="0"'), 128000);
    assert.equal(sample(text, 'pvc_ceph_osd_wr_data', 'osd="0"'), 4096);
    assert.equal(sample(text, 'pvc_ceph_osd_rd_data', 'osd="0"'), 1048576);
    assert.equal(sample(text, 'pvc_cluster_disk_utilization'), 12.5);
    assert.equal(sample(text, 'pvc_ceph_pool_used_percent', 'pool="vms"'), 25);
    assert.equal(sample(text, 'pvc_ceph_pool_num_objects', 'pool="vms"'), 7);
    assert.equal(sample(text, 'pvc_ceph_pool_free_bytes', 'pool="vms"'), undefined, 'not in the stored stats: no sample');
  });
});

describe('metrics server', () => {
  it('serves the three paths and 404 elsewhere', async () => {
    const { zk, log } = await cluster();
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, logger: log.logger, read: () => read(zk, 'hv1', log) });
    assert.ok(server);
    try {
      const get = (path: string) => fetch(`http://${server.address}${path}`);
      const all = await get('/metrics');
      assert.equal(all.status, 200);
      assert.match(all.headers.get('content-type') ?? '', /text\/plain; version=0.0.4/);
      assert.match(await all.text(), /^pvc_vms 2$/m);
      assert.match(await (await get('/metrics/health')).text(), /^pvc_vms 2$/m);
      assert.doesNotMatch(await (await get('/metrics/resource')).text(), /pvc_vms /);
      assert.equal((await get('/other')).status, 404);
    } finally {
      await server.close();
    }
  });

  it('a port in use is one error line naming the address and port, and nothing throws', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const port = (holder.address() as { port: number }).port;
    const log = captureLogger('keepaliled');
    try {
      const server = await startMetricsServer({ host: '127.0.0.1', port, logger: log.logger, read: () => Promise.reject(new Error('unused')) });
      assert.equal(server, undefined);
      const errors = log.lines.filter((l) => l.level === 50);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]?.msg, `cannot serve metrics on 127.0.0.1:${port}: the port is already in use; keepaliled goes on without metrics`);
    } finally {
      holder.close();
    }
  });

  it('a failed Zookeeper read answers 503 and the server keeps serving', async () => {
    const log = captureLogger('keepaliled');
    let fail = true;
    const { zk } = await cluster();
    const server = await startMetricsServer({
      host: '127.0.0.1', port: 0, logger: log.logger,
      read: () => (fail ? Promise.reject(new Error('connection loss')) : read(zk, 'hv1', log)),
    });
    assert.ok(server);
    try {
      assert.equal((await fetch(`http://${server.address}/metrics`)).status, 503);
      fail = false;
      assert.equal((await fetch(`http://${server.address}/metrics`)).status, 200);
    } finally {
      await server.close();
    }
  });
});
