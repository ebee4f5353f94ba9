/**
 * Prometheus metrics (issue 15 item 3) scraped by a real Prometheus server: 3 harness hosts with
 * Ceph running the node services, keepaliled serving metrics on each host's cluster address; a
 * pool, a volume and a running guest with an RBD disk and a NIC on a managed network. Prometheus
 * (Debian's package, in the root namespace) scrapes every host's `/metrics`; every name the
 * original's two Grafana dashboards query returns data.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingPrerequisites } from './harness/index.js';
import { startFailoverCluster, type FailoverCluster } from './failover-scenario.js';
import { networkAddArgs, scenarioNet } from './client-network-scenario.js';
import { waitUntil } from '../support/wait.js';

const PORT = 7380;
const NAME = 'vmet';
const log = (l: string): void => console.log(`  [metrics] ${l}`);
const UUID = 'e0000000-0000-4000-8000-000000000001';
const NET = scenarioNet(1300, 13, 'metnet');

/** The 82 names the original's "PVC cluster" and "PVC VMs" dashboards query (shared/reference/pvc-metrics.md). */
const DASHBOARD_NAMES = [
  'pvc_ceph_osd_in_states', 'pvc_ceph_osd_rd_data', 'pvc_ceph_osd_rd_ops', 'pvc_ceph_osd_up_states', 'pvc_ceph_osd_used', 'pvc_ceph_osd_util',
  'pvc_ceph_osd_wr_data', 'pvc_ceph_osd_wr_ops', 'pvc_ceph_pool_num_objects', 'pvc_ceph_pool_num_objects_clones', 'pvc_ceph_pool_num_objects_copies',
  'pvc_ceph_pool_num_objects_degraded', 'pvc_ceph_pool_num_objects_missing_on_primary', 'pvc_ceph_pool_num_objects_unfound', 'pvc_ceph_pool_used_bytes',
  'pvc_ceph_pool_used_percent', 'pvc_cluster_cpu_utilization', 'pvc_cluster_disk_utilization', 'pvc_cluster_faults', 'pvc_cluster_health',
  'pvc_cluster_id', 'pvc_cluster_maintenance', 'pvc_cluster_memory_allocated_utilization', 'pvc_cluster_memory_provisioned_utilization',
  'pvc_cluster_memory_real_utilization', 'pvc_cluster_network_utilization', 'pvc_info', 'pvc_networks', 'pvc_node_allocated_memory',
  'pvc_node_allocated_memory_utilization', 'pvc_node_cpu_utilization', 'pvc_node_daemon_states', 'pvc_node_domain_states', 'pvc_node_health',
  'pvc_node_load_average', 'pvc_node_network_traffic_rx', 'pvc_node_network_traffic_tx', 'pvc_node_network_utilization', 'pvc_node_provisioned_memory',
  'pvc_node_provisioned_memory_utilization', 'pvc_node_used_memory', 'pvc_node_used_memory_utilization', 'pvc_nodes', 'pvc_osds', 'pvc_pools',
  'pvc_snapshots', 'pvc_vm_active_node', 'pvc_vm_autostart', 'pvc_vm_description', 'pvc_vm_disk_rd_bytes', 'pvc_vm_disk_rd_req', 'pvc_vm_disk_wr_bytes',
  'pvc_vm_disk_wr_req', 'pvc_vm_failed_reason', 'pvc_vm_memory', 'pvc_vm_memory_stats_actual', 'pvc_vm_memory_stats_disk_caches',
  'pvc_vm_memory_stats_major_fault', 'pvc_vm_memory_stats_minor_fault', 'pvc_vm_memory_stats_rss', 'pvc_vm_memory_stats_swap_in',
  'pvc_vm_memory_stats_swap_out', 'pvc_vm_migrated', 'pvc_vm_network_rd_bits', 'pvc_vm_network_rd_drops', 'pvc_vm_network_rd_errors',
  'pvc_vm_network_rd_packets', 'pvc_vm_network_wr_bits', 'pvc_vm_network_wr_drops', 'pvc_vm_network_wr_errors', 'pvc_vm_network_wr_packets',
  'pvc_vm_node_limit', 'pvc_vm_state', 'pvc_vm_states', 'pvc_vm_uuid', 'pvc_vm_vcpu_topology', 'pvc_vm_vcpus', 'pvc_vm_vcpus_cpu_time',
  'pvc_vm_vcpus_system_time', 'pvc_vm_vcpus_user_time', 'pvc_vms', 'pvc_volumes',
] as const;

type Series = { metric: Record<string, string>; value: [number, string] };

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen({ host: '127.0.0.1', port: 0 }, r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('keepaliled metrics scraped by a real Prometheus [root only]', () => {
  let fc: FailoverCluster | undefined;
  let prom: ChildProcess | undefined;
  let dir: string;
  let api: string;
  const query = async (q: string): Promise<Series[]> => {
    const r = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as { status: string; data: { result: Series[] } };
    assert.equal(r.status, 'success', q);
    return r.data.result;
  };

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    dir = mkdtempSync(join(tmpdir(), 'pvc-metrics-'));
    fc = await startFailoverCluster(NAME, { keepaliveInterval: 2, fenceIntervals: 6, successfulFence: 'none', metricsPort: PORT }, log, { ceph: true });
    const cli = fc.cli;
    await cli.ok(...networkAddArgs(NET));
    await cli.ok('storage', 'pool', 'add', 'met', '16');
    await cli.ok('storage', 'volume', 'add', 'met', 'disk1', '64M');
    const xml = fc.cluster.guest.domainXml('mvm1', {
      uuid: UUID, memoryMiB: 128, disks: [{ pool: 'met', image: 'disk1' }], interfaces: [{ bridge: NET.bridge, mac: '52:54:00:13:00:01' }],
    });
    await cli.define(xml, 'hv1');
    await cli.ok('vm', 'start', 'mvm1', '--wait');
    const targets = fc.cluster.hosts.map((h) => `${h.clusterIp}:${PORT}`);
    writeFileSync(join(dir, 'prometheus.yml'), [
      'global:', '  scrape_interval: 2s', '  scrape_timeout: 2s', 'scrape_configs:', '  - job_name: pvc_cluster', '    metrics_path: /metrics',
      '    static_configs:', `      - targets: [${targets.map((t) => `"${t}"`).join(', ')}]`, `        labels: { pvc_cluster_id: "${NAME}" }`, '',
    ].join('\n'));
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    prom = spawn('/usr/bin/prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    prom.stderr?.on('data', (b: Buffer) => void (stderr = (stderr + b.toString()).slice(-4000)));
    await waitUntil(async () => {
      const r = (await (await fetch(`${api}/api/v1/targets`)).json()) as { data: { activeTargets: { health: string; scrapeUrl: string; lastError: string }[] } };
      const t = r.data.activeTargets;
      return t.length === 3 && t.every((x) => x.health === 'up') ? t : undefined;
    }, { what: `Prometheus: all 3 targets up (stderr tail: ${stderr.slice(-300)})`, timeoutMs: 60_000, intervalMs: 500 }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${stderr.slice(-2000)}`);
    });
    log(`Prometheus on ${api} scrapes ${targets.join(' ')}: all up`);
  });

  after(async () => {
    prom?.kill('SIGTERM');
    await fc?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every name the original\'s two dashboards query returns data', async () => {
    // pvc_cluster_id is not a metric: the original's prometheus.yml sets it as a target label.
    const probe = (n: string): string => (n === 'pvc_cluster_id' ? `{pvc_cluster_id="${NAME}"}` : n);
    const missing = await waitUntil(async () => {
      const out: string[] = [];
      for (const n of DASHBOARD_NAMES) if ((await query(probe(n))).length === 0) out.push(n);
      return out;
    }, { what: 'every dashboard name has a series', timeoutMs: 120_000, intervalMs: 2_000, until: (m) => m.length === 0 }).catch(async () => {
      const out: string[] = [];
      for (const n of DASHBOARD_NAMES) if ((await query(probe(n))).length === 0) out.push(n);
      return out;
    });
    assert.deepEqual(missing, [], `names without data: ${missing.join(' ')}`);
    log(`${DASHBOARD_NAMES.length} dashboard names: each has at least one series`);
  });

  it('labels: node figures from every node, VM figures by name, the summary from the primary only', async () => {
    const used = await query('pvc_node_used_memory');
    assert.deepEqual(used.map((s) => s.metric.node).sort(), ['hv1', 'hv2', 'hv3']);
    for (const s of used) assert.equal(s.metric.instance?.split(':')[0], fc!.cluster.host(s.metric.node!).clusterIp, 'each node serves its own figures');
    const active = await query('pvc_vm_active_node{vm="mvm1"}');
    assert.deepEqual(active.map((s) => [s.metric.node, s.value[1]]), [['hv1', '1']]);
    const info = await query('pvc_info');
    assert.equal(info.length, 1, 'one pvc_info: only the primary serves the summary');
    assert.equal(info[0]?.metric.primary_node, fc!.primary);
    assert.equal((await query('pvc_vms'))[0]?.value[1], '1');
    assert.equal((await query('pvc_nodes'))[0]?.value[1], '3');
    assert.equal((await query('pvc_vm_states{state="start"}'))[0]?.value[1], '1');
    const disks = await query('pvc_vm_disk_wr_req{vm="mvm1"}');
    assert.deepEqual(disks.map((s) => s.metric.disk), ['vda']);
    const nets = await query('pvc_vm_network_rd_bits{vm="mvm1"}');
    assert.deepEqual(nets.map((s) => s.metric.vni), [String(NET.vni)]);
  });
});
