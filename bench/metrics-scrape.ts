/**
 * The cost of one scrape of the primary's full `/metrics` (issue 15 item 4): a real Zookeeper
 * seeded with a 200-VM cluster (10 nodes, 200 domains with stats, 3 OSDs, 1 pool), keepaliled's
 * metrics endpoint in-process reading it through a counting ZK client; the time of a whole HTTP
 * GET (read + build + exposition) and the ZK operations it makes, median of several runs.
 *
 * Run: node --conditions=development --import tsx bench/metrics-scrape.ts [--vms 200] [--nodes 10] [--runs 9]
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { captureLogger, realClock } from '@pvc/runtime';
import { connectZk, newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { startMetricsServer } from '../apps/keepaliled/src/metrics/server.js';
import { readMetricsInput } from '../apps/keepaliled/src/metrics/source.js';
import { countingZk as counting } from '../tests/support/counting-zk.js';
import { ZkTestServer } from '../tests/support/zk-server.js';

const { values } = parseArgs({ options: { vms: { type: 'string', default: '200' }, nodes: { type: 'string', default: '10' }, runs: { type: 'string', default: '9' } } });
const VMS = Number(values.vms);
const NODES = Number(values.nodes);
const RUNS = Number(values.runs);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const xml = (name: string, uuid: string, i: number): string =>
  `<domain type='kvm'><name>${name}</name><uuid>${uuid}</uuid><description>bench ${i}</description><memory unit='MiB'>1024</memory><vcpu>2</vcpu>` +
  `<devices><disk type='network' device='disk'><source protocol='rbd' name='vms/${name}_disk0'/><target dev='sda' bus='scsi'/></disk>` +
  `<interface type='bridge'><mac address='52:54:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}'/>` +
  `<source bridge='vmbr100'/><model type='virtio'/></interface></devices></domain>`;

const stats = (name: string): string => JSON.stringify({
  state: 'RUNNING', maxmem: 1048576, livemem: 1048576, cpus: 2, cputime: 1e12,
  mem_stats: { actual: 1048576, rss: 600000, unused: 100000, available: 1000000, usable: 800000, disk_caches: 50000, swap_in: 0, swap_out: 0, major_fault: 10, minor_fault: 1000 },
  cpu_stats: { cpu_time: 1e12, user_time: 6e11, system_time: 2e11 },
  disk_stats: [{ name: `vms/${name}_disk0`, rd_req: 1, rd_bytes: 2, wr_req: 3, wr_bytes: 4, err: -1 }],
  net_stats: [{ name: 'vnet0', bridge: 'vmbr100', rd_bytes: 1, rd_packets: 2, rd_errors: 0, rd_drops: 0, wr_bytes: 3, wr_packets: 4, wr_errors: 0, wr_drops: 0 }],
});

async function seed(zk: ZkClient): Promise<void> {
  for (const p of [paths.config.primaryNode, paths.config.maintenance, paths.network(100).root, paths.nodes, paths.domains, paths.networks, paths.faults.root, paths.ceph.osds, paths.ceph.pools, paths.ceph.volumes, paths.ceph.snapshots]) await zk.ensurePath(p);
  await zk.write([[paths.config.primaryNode, 'hv1'], [paths.config.maintenance, 'false'], [paths.network(100).root, 'net100']]);
  for (let n = 1; n <= NODES; n++) {
    const name = `hv${n}`;
    const def = newNodeObject({ name, daemonMode: 'coordinator', nowMs: Date.now(), staticData: '16 6.1.0-18-amd64 debian x86_64', pvcVersion: '0.1.0', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(def.root, def.entries);
    const k = paths.node(name);
    await zk.write([[k.daemonState, 'run'], [k.domainState, 'ready'], [k.memTotal, '65536'], [k.memUsed, '20000'], [k.memFree, '45536'], [k.cpuLoad, '1.5'],
      [k.monitoringHealth, '100'], [k.networkStats, '{"eth0":{"rx_bps":1,"tx_bps":2,"rx_pps":3,"tx_pps":4,"total_bps":3,"link_speed":10000,"state":"up"}}']]);
  }
  for (let i = 0; i < VMS; i++) {
    const uuid = `be000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const d = newDomainObject({ uuid, name: `vm${i}`, node: `hv${(i % NODES) + 1}`, state: 'start', xml: xml(`vm${i}`, uuid, i) });
    await zk.createObject(d.root, d.entries);
    await zk.write([[paths.domain(uuid).stats, stats(`vm${i}`)]]);
  }
  for (let o = 0; o < 3; o++) {
    const p = paths.ceph.osd(o);
    await zk.ensurePath(p.root);
    await zk.write([[p.node, `hv${o + 1}`], [p.device, '/dev/sdb'], [p.dbDevice, ''], [p.stats, JSON.stringify({ up: 1, in: 1, utilization: 10, kb: 1e9, kb_used: 1e8, wr_ops: '1', wr_data: '4.0k', rd_ops: '0', rd_data: '0' })]]);
  }
  const pool = paths.ceph.pool('vms');
  await zk.ensurePath(pool.root);
  await zk.write([[pool.pgs, '64'], [pool.tier, 'default'], [pool.stats, JSON.stringify({ used_percent: 0.1, num_objects: 100, used_bytes: 1e9 })]]);
}


async function main(): Promise<void> {
  const server = await ZkTestServer.start();
  const raw = await connectZk({ hosts: [server.hostPort], clock: realClock });
  const { zk, ops } = counting(raw);
  const { logger } = captureLogger('keepaliled');
  const metrics = await startMetricsServer({ host: '127.0.0.1', port: 0, logger, read: () => readMetricsInput({ zk, node: 'hv1', version: '0.1.0', logger, timeoutMs: 10_000 }) });
  try {
    await seed(raw);
    const times: number[] = [];
    let bytes = 0;
    let lines = 0;
    let perScrape = 0;
    for (let i = 0; i < RUNS + 1; i++) {
      const before = ops.n;
      const t0 = performance.now();
      const text = await (await fetch(`http://${metrics!.address}/metrics`)).text();
      const ms = performance.now() - t0;
      if (i === 0) continue; // warm-up
      times.push(ms);
      perScrape = ops.n - before;
      bytes = text.length;
      lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    }
    const rss = process.memoryUsage().rss / 2 ** 20;
    console.log(`metrics scrape of the primary's /metrics on a real Zookeeper: ${NODES} nodes, ${VMS} VMs, 3 OSDs, 1 pool; ${RUNS} runs after a warm-up; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`);
    console.log(`  time per scrape: median ${median(times).toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)})`);
    console.log(`  ZK reads per scrape: ${perScrape} (read/exists/children)`);
    console.log(`  response: ${lines} samples, ${(bytes / 1024).toFixed(0)} KiB; process RSS after: ${rss.toFixed(0)} MiB`);
  } finally {
    await metrics?.close();
    await raw.close();
    await server.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
