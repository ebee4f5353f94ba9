/**
 * Metadata API request latency (issue 16 item 3): a real Zookeeper seeded with many VMs, each with
 * one NIC on one of several managed networks and a DHCP lease there (the lease addresses are
 * 127.1.x.y, so each request can come from its VM's own address), netd's metadata API in-process
 * on 127.0.0.1 reading through a counting ZK client, user-data from the fake database (this
 * measures the lookup, not PostgreSQL). Each run asks `/latest/meta-data/instance-id` from a
 * random VM's address, one request at a time; median and p95 of the whole HTTP GET, and the ZK
 * reads per request.
 *
 * Run: node --conditions=development --import tsx bench/metadata-api.ts [--vms 200] [--networks 10] [--runs 200]
 */
import { request } from 'node:http';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { captureLogger, realClock } from '@pvc/runtime';
import { baseKeys, connectZk, leaseKeys, newDomainObject, newNetworkObject, type ZkClient } from '@pvc/zk';
import { buildMetadataApi, FakeUserData } from '../apps/netd/src/metadata/index.js';
import { countingZk as counting } from '../tests/support/counting-zk.js';
import { ZkTestServer } from '../tests/support/zk-server.js';

const { values } = parseArgs({ options: { vms: { type: 'string', default: '200' }, networks: { type: 'string', default: '10' }, runs: { type: 'string', default: '200' } } });
const VMS = Number(values.vms);
const NETWORKS = Number(values.networks);
const RUNS = Number(values.runs);
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

const hex = (n: number): string => n.toString(16).padStart(2, '0');
const vmOf = (i: number) => ({
  uuid: `be000000-0000-4000-8000-${String(i).padStart(12, '0')}`, name: `vm${i}`, vni: 100 + (i % NETWORKS),
  mac: `52:54:00:01:${hex(i >> 8)}:${hex(i & 255)}`, ip: `127.1.${i >> 8}.${(i & 255) + 1}`,
});

async function seed(zk: ZkClient): Promise<void> {
  for (const k of baseKeys()) await zk.ensurePath(k);
  for (let n = 0; n < NETWORKS; n++) {
    const vni = 100 + n;
    const o = newNetworkObject({ vni, description: `net${vni}`, type: 'managed', ip4Network: `10.${n}.0.0/16`, ip4Gateway: `10.${n}.0.1`, dhcp4: true, dhcp4Start: `10.${n}.1.0`, dhcp4End: `10.${n}.200.0` });
    await zk.createObject(o.root, o.entries);
  }
  for (let i = 0; i < VMS; i++) {
    const v = vmOf(i);
    const xml = `<domain type='kvm'><name>${v.name}</name><uuid>${v.uuid}</uuid><memory unit='MiB'>1024</memory><vcpu>2</vcpu><devices>` +
      `<disk type='network' device='disk'><source protocol='rbd' name='vms/${v.name}_disk0'/><target dev='sda' bus='scsi'/></disk>` +
      `<interface type='bridge'><mac address='${v.mac}'/><source bridge='vmbr${v.vni}'/><model type='virtio'/></interface></devices></domain>`;
    const d = newDomainObject({ uuid: v.uuid, name: v.name, node: 'hv1', state: 'start', xml, profile: 'cloud' });
    await zk.createObject(d.root, d.entries);
    const l = leaseKeys(v.vni, v.mac);
    await zk.write([[l.root.path, ''], [l.expiry.path, '0'], [l.ipaddr.path, v.ip], [l.hostname.path, v.name], [l.clientId.path, '*']]);
  }
}


function get(port: number, path: string, localAddress: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const server = await ZkTestServer.start();
  const raw = await connectZk({ hosts: [server.hostPort], clock: realClock });
  const { zk, ops } = counting(raw);
  const { api, server: http } = buildMetadataApi({ zk, userData: new FakeUserData(), clock: realClock, logger: captureLogger('netd').logger, host: '127.0.0.1', port: 0 });
  try {
    await seed(raw);
    await api.start();
    const times: number[] = [];
    const reads: number[] = [];
    for (let i = 0; i < RUNS + 5; i++) {
      const v = vmOf(Math.floor(Math.random() * VMS));
      const before = ops.n;
      const t0 = performance.now();
      const r = await get(http.port, '/latest/meta-data/instance-id', v.ip);
      const ms = performance.now() - t0;
      if (r.status !== 200 || r.body !== v.uuid) throw new Error(`${v.ip}: ${r.status} ${r.body}`);
      if (i < 5) continue; // warm-up
      times.push(ms);
      reads.push(ops.n - before);
    }
    const unknown: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      if ((await get(http.port, '/latest/meta-data/instance-id', '127.2.0.1')).status !== 404) throw new Error('unknown caller not refused');
      unknown.push(performance.now() - t0);
    }
    console.log(`metadata API on a real Zookeeper: ${VMS} VMs, ${NETWORKS} managed networks, one lease per VM; ${RUNS} requests after a warm-up, one at a time; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`);
    console.log(`  GET /latest/meta-data/instance-id (known caller): median ${pct(times, 0.5).toFixed(1)} ms, p95 ${pct(times, 0.95).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`);
    console.log(`  ZK reads per request: ${pct(reads, 0.5)} (read/exists/children)`);
    console.log(`  unknown caller (404, no domain read): median ${pct(unknown, 0.5).toFixed(1)} ms`);
  } finally {
    await api.stop();
    await raw.close();
    await server.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
