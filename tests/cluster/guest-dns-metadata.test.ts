/**
 * The DNS aggregator and the metadata API with real guests (issue 16 item 4): 3 hosts with the node
 * services, hv3 primary, both coordinator databases on a real PostgreSQL in the root namespace
 * (listening on its cluster-bridge address; the DNS one empty — the aggregator loads PowerDNS's
 * schema —, the metadata one with the provisioner's tables, two profiles and their user-data); a
 * managed network with a domain, DHCP and a reservation per guest; guest A (profile pvcgd-web) on
 * hv1 and guest B (profile pvcgd-db) on hv2 (busybox: udhcpc sends the guest's name as its
 * hostname, so dnsmasq's lease carries it into the network's auth zone).
 *
 * - B resolves A's name through the aggregator on the cluster floating address, A resolves B's on
 *   the upstream one (console `lookup` lines); each guest gets its own instance-id (its UUID) and its
 *   profile's user-data from `169.254.169.254` (console `meta` lines), never the other's.
 * - `pvc node primary hv1 --wait`: pdns_server, `169.254.169.254` and dnsmasq on hv1 only; both
 *   guests' lookups and metadata requests answer again (bounded: the new aggregator's first pass,
 *   the 10 s AXFR period, the guests' 2–3 s loops).
 * - No VM on two hosts, no node fenced.
 *
 * Figures printed (docs/benchmarks.md): lease → name resolving through the aggregator (dig from the
 * root namespace at the cluster floating address, 100 ms polls), the guests' lookup and metadata
 * request durations (guest uptime, 10 ms resolution), handover → answers again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createExec, realClock } from '@pvc/runtime';
import { leaseKeys, paths, readKeyIfExists } from '@pvc/zk';
import { missingPrerequisites, type Cluster } from './harness/index.js';
import type { FailoverCluster } from './failover-scenario.js';
import { floatingAddresses, staleBuilds, type CoordinatorDatabases, type PvcNodeSettings } from './pvc-node.js';
import {
  bridgesUp, networkAddArgs, placeNetGuest, scenarioNet, servers, startClientNetCluster, waitLease, type NetGuest,
} from './client-network-scenario.js';
import { consoleLookups, consoleMeta, consoleSize } from '../support/guest/console.js';
import { PgTestServer } from '../support/postgres-server.js';
import { createRoleAndDatabase, provisionerSchema } from '../support/provisioner-db.js';
import { waitUntil } from '../support/wait.js';

const log = (l: string): void => console.log(`  [guest-dns-metadata] ${l}`);
const exec = createExec();
const NET = scenarioNet(1600, 116, 'gdnet');
const DOMAIN = 'gdnet.pvcgd.test';
interface MetaGuest extends NetGuest { profile: string; userdata: string }
const A: MetaGuest = {
  name: 'pvcgd-a', uuid: 'c1600000-0000-4000-8000-00000000000a', mac: '52:54:00:16:00:0a', ip: `${NET.prefix}.11`,
  profile: 'pvcgd-web', userdata: '#cloud-config\nhostname: pvcgd-a\nfqdn: pvcgd-a.gdnet.pvcgd.test\n',
};
const B: MetaGuest = {
  name: 'pvcgd-b', uuid: 'c1600000-0000-4000-8000-00000000000b', mac: '52:54:00:16:00:0b', ip: `${NET.prefix}.12`,
  profile: 'pvcgd-db', userdata: '#cloud-config\nhostname: pvcgd-b\nruncmd: [ echo db ]\n',
};
const fqdn = (g: NetGuest): string => `${g.name}.${DOMAIN}`;
/** The user-data as the guest prints it (init.sh: line breaks as `|`, no trailing one). */
const printed = (ud: string): string => ud.replace(/\n$/, '').replace(/\n/g, '|');
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const spread = (xs: readonly number[]): string => (xs.length === 0 ? 'none' : `median ${median(xs)} ms, max ${Math.max(...xs)} ms over ${xs.length}`);

const DB_USERS = { dns: { name: 'pvcdns', user: 'pvcdns', pass: 'pvcdns-Gd-Passw0rd' }, metadata: { name: 'pvcapi', user: 'pvcapi', pass: 'pvcapi-Gd-Passw0rd' } };

function requireTools(): void {
  for (const [cmd, ...args] of [['/usr/sbin/pdns_server', '--version'], ['/usr/bin/pdns_control', '--help'], ['dig', '-v']]) {
    const r = spawnSync(cmd!, args, { encoding: 'utf8' });
    assert.equal(r.error, undefined, `${cmd} is needed on the hosts (Debian packages pdns-server pdns-backend-pgsql bind9-dnsutils; scripts/setup.sh): ${r.error?.message ?? ''}`);
  }
}

/** dig from the root namespace at `server`: the A records of `name` (empty on no answer). */
function dig(server: string, name: string): string[] {
  const r = spawnSync('dig', ['+short', '+tries=1', '+time=1', `@${server}`, name, 'A'], { encoding: 'utf8' });
  return r.stdout.split('\n').map((l) => l.trim()).filter((l) => /^\d+\.\d+\.\d+\.\d+$/.test(l));
}

/** Hosts running pdns_server on port 53, and hosts holding 169.254.169.254 on lo. */
async function holders(fc: FailoverCluster): Promise<{ pdns: string[]; metadata: string[] }> {
  const out = { pdns: [] as string[], metadata: [] as string[] };
  for (const h of fc.cluster.hosts) {
    const udp = (await exec.run('ip', ['netns', 'exec', h.netns, 'ss', '-H', '-l', '-n', '-u', '-p', 'sport = :53'])).stdout;
    if (/"pdns/.test(udp)) out.pdns.push(h.name); // the process is pdns_server (its threads are pdns/…)
    const lo = (await exec.run('ip', ['-n', h.netns, '-4', '-o', 'address', 'show', 'dev', 'lo'])).stdout;
    if (lo.includes(' 169.254.169.254/32')) out.metadata.push(h.name);
  }
  return out;
}

describe('cluster: guests resolve each other through the DNS aggregator and read the metadata API, across a handover', { timeout: 900_000 }, () => {
  let fc: FailoverCluster | undefined;
  let pg: PgTestServer | undefined;
  const consoleOf = (g: NetGuest): string => fc!.cluster.guest.consoleLog(g.name);

  /** PostgreSQL on the root namespace's cluster address with both databases; the node configs point at it. */
  const prepare = async (cluster: Cluster): Promise<Partial<PvcNodeSettings>> => {
    const host = cluster.rootIps.cluster;
    pg = new PgTestServer({ listen: ['127.0.0.1', host], clientNetworks: [`${host.replace(/\.\d+$/, '.0')}/24`] });
    await pg.start();
    for (const db of Object.values(DB_USERS)) createRoleAndDatabase(pg, db);
    pg.sql(provisionerSchema(DB_USERS.metadata.user, [A, B]), DB_USERS.metadata.name);
    const dbs: CoordinatorDatabases = {
      dns: { host, port: pg.port, ...DB_USERS.dns },
      metadata: { host, port: pg.port, ...DB_USERS.metadata },
    };
    log(`PostgreSQL on ${host}:${pg.port} (root namespace) with ${DB_USERS.dns.name} and ${DB_USERS.metadata.name} (profiles ${A.profile}, ${B.profile})`);
    return { coordinatorDatabases: dbs };
  };

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    assert.deepEqual(staleBuilds(), [], 'the node services must be built (npx tsc -b tsconfig.json)');
    requireTools();
    fc = await startClientNetCluster('pvcgd', log, prepare);
    assert.ok('modules' in fc.cluster.guest.net, `the guest image has no NIC: ${JSON.stringify(fc.cluster.guest.net)}`);
  });

  after(async () => {
    await fc?.close();
    pg?.close();
  });

  /** Waits for `g`'s console lookup of `other` answering `other.ip`, printed after `from`. */
  const waitLookup = (g: NetGuest, other: NetGuest, from: number, timeoutMs: number): Promise<unknown> =>
    waitUntil(() => consoleLookups(consoleOf(g), g.name, from, fqdn(other)), {
      what: `${g.name}'s console "lookup ${fqdn(other)}/… ok … ${other.ip}"`, timeoutMs, intervalMs: 250,
      until: (ls) => ls.some((l) => l.ok && l.value === other.ip),
    }).catch((err: unknown) => {
      const ls = consoleLookups(consoleOf(g), g.name, from, fqdn(other));
      throw new Error(`${(err as Error).message}; its last lookups: ${ls.slice(-3).map((l) => `${l.ok ? 'ok' : 'fail'} ${l.value}`).join(' / ') || 'none'}`);
    });
  /** Waits for `g`'s own instance-id and user-data in its console after `from`. */
  const waitMeta = (g: MetaGuest, from: number, timeoutMs: number): Promise<unknown> =>
    waitUntil(() => consoleMeta(consoleOf(g), g.name, from), {
      what: `${g.name}'s console "meta instance-id ok … ${g.uuid}" and "meta user-data ok … ${printed(g.userdata)}"`, timeoutMs, intervalMs: 250,
      until: (ms) => ms.some((m) => m.ok && m.what === 'instance-id' && m.value === g.uuid) && ms.some((m) => m.ok && m.what === 'user-data' && m.value === printed(g.userdata)),
    }).catch((err: unknown) => {
      const ms = consoleMeta(consoleOf(g), g.name, from);
      throw new Error(`${(err as Error).message}; its last requests: ${ms.slice(-4).map((m) => `${m.what} ${m.ok ? 'ok' : 'fail'} ${m.value}`).join(' / ') || 'none'}`);
    });
  /** Every metadata answer `g` got is its own (never the other guest's data). */
  const onlyOwnData = (g: MetaGuest): void => {
    for (const m of consoleMeta(consoleOf(g), g.name).filter((x) => x.ok)) {
      assert.equal(m.value, m.what === 'instance-id' ? g.uuid : printed(g.userdata), `${g.name} got ${m.what} "${m.value}"`);
    }
  };

  it('B resolves A on the cluster floating address, A resolves B on the upstream one; each reads its own instance-id and user-data', async () => {
    const { cli, cluster, zk } = fc!;
    const floating = floatingAddresses(cluster);
    await cli.ok(...networkAddArgs(NET), '-n', DOMAIN);
    for (const g of [A, B]) await cli.ok('network', 'dhcp', 'add', String(NET.vni), g.ip, g.name, g.mac);
    await waitUntil(() => bridgesUp(fc!, NET), { what: `${NET.bridge} up on every host`, timeoutMs: 30_000, intervalMs: 200 });
    await waitUntil(() => servers(fc!, NET), { what: 'gateway and dnsmasq on hv3 only', timeoutMs: 30_000, intervalMs: 250, until: (s) => s.gateway.join() === 'hv3' && s.dnsmasq.join() === 'hv3' });
    await waitUntil(() => holders(fc!), { what: 'pdns_server and 169.254.169.254 on hv3 only', timeoutMs: 30_000, intervalMs: 250, until: (h) => h.pdns.join() === 'hv3' && h.metadata.join() === 'hv3' });

    // Lease (its key in ZK) → the name answered by the aggregator; the watchers start before the guests.
    const leaseToName = (g: NetGuest): Promise<number> => (async () => {
      await waitUntil(() => readKeyIfExists(zk, leaseKeys(NET.vni, g.mac).ipaddr), { what: `${g.name}'s lease in ZK`, timeoutMs: 300_000, intervalMs: 100, until: (ip) => ip === g.ip });
      const leased = realClock.now();
      await waitUntil(() => dig(floating.cluster, fqdn(g)), { what: `${fqdn(g)} → ${g.ip} through the aggregator at ${floating.cluster}`, timeoutMs: 60_000, intervalMs: 100, until: (a) => a.join() === g.ip });
      return realClock.now() - leased;
    })();
    const figures = [leaseToName(A), leaseToName(B)];
    for (const f of figures) f.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
    const t0 = realClock.now();
    await placeNetGuest(fc!, A, NET, cluster.host('hv1'), `pvc.net=dhcp pvc.renew=30 pvc.lookup=${fqdn(B)}/${floating.upstream} pvc.meta=3`, ['--profile', A.profile]);
    await placeNetGuest(fc!, B, NET, cluster.host('hv2'), `pvc.net=dhcp pvc.renew=30 pvc.lookup=${fqdn(A)}/${floating.cluster} pvc.meta=3`, ['--profile', B.profile]);
    for (const g of [A, B]) await waitLease(fc!, g);
    const [toA, toB] = await Promise.all(figures);
    log(`lease → name answered by the aggregator at ${floating.cluster} (dig from the root namespace, 100 ms polls): ${A.name} ${toA} ms, ${B.name} ${toB} ms`);
    // Target (a figure, logged): the 10 s period + 1 s. Asserted: within two passes — it was 22–53 s
    // while PowerDNS's zone cache hid a zone added while pdns_server ran (now off:
    // --zone-cache-refresh-interval=0); a bound at the period would fail a loaded CI run for a slow pass.
    log(`target lease → name ≤ 11 s: ${toA! <= 11_000 && toB! <= 11_000 ? 'met' : 'missed'}`);
    assert.ok(toA! <= 20_000 && toB! <= 20_000, `lease → name within two passes: ${toA} ms, ${toB} ms`);

    await waitLookup(B, A, 0, 90_000);
    await waitLookup(A, B, 0, 90_000);
    for (const g of [A, B]) await waitMeta(g, 0, 90_000);
    for (const g of [A, B]) onlyOwnData(g);
    log(`both guests resolve each other and read their own metadata ${secs(realClock.now() - t0)} after the first vm define`);
    const okLookups = [A, B].flatMap((g) => consoleLookups(consoleOf(g), g.name).filter((l) => l.ok).map((l) => l.ms));
    const metaIds = [A, B].flatMap((g) => consoleMeta(consoleOf(g), g.name).filter((m) => m.ok && m.what === 'instance-id').map((m) => m.ms));
    const metaUd = [A, B].flatMap((g) => consoleMeta(consoleOf(g), g.name).filter((m) => m.ok && m.what === 'user-data').map((m) => m.ms));
    log(`in the guests (TCG, 10 ms resolution): nslookup ${spread(okLookups)}; GET meta-data/instance-id ${spread(metaIds)}; GET user-data ${spread(metaUd)}`);
  });

  it('after pvc node primary hv1 --wait both guests still resolve each other and read their own metadata', async () => {
    const { cli, cluster } = fc!;
    const floating = floatingAddresses(cluster);
    const offsets = new Map([A, B].map((g) => [g.name, consoleSize(consoleOf(g))]));
    const start = realClock.now();
    await cli.ok('node', 'primary', 'hv1', '--wait', '--wait-timeout', '120');
    const done = realClock.now();
    await waitUntil(() => holders(fc!), { what: 'pdns_server and 169.254.169.254 on hv1 only', timeoutMs: 30_000, intervalMs: 250, until: (h) => h.pdns.join() === 'hv1' && h.metadata.join() === 'hv1' });
    await waitUntil(() => servers(fc!, NET), { what: 'gateway and dnsmasq on hv1 only', timeoutMs: 30_000, intervalMs: 250, until: (s) => s.gateway.join() === 'hv1' && s.dnsmasq.join() === 'hv1' });
    const moved = realClock.now();
    // Bound: the new aggregator's first pass (at once, then every 10 s; pdns_server started), plus the polls.
    await waitUntil(() => dig(floating.cluster, fqdn(A)), { what: `${fqdn(A)} → ${A.ip} through hv1's aggregator`, timeoutMs: 30_000, intervalMs: 100, until: (a) => a.join() === A.ip });
    const digAgain = realClock.now();
    const since = (g: MetaGuest): number => offsets.get(g.name)!;
    await waitLookup(B, A, since(B), 60_000);
    await waitLookup(A, B, since(A), 60_000);
    const lookupsAgain = realClock.now();
    for (const g of [A, B]) await waitMeta(g, since(g), 60_000);
    const metaAgain = realClock.now();
    for (const g of [A, B]) onlyOwnData(g);
    const failed = [A, B].map((g) => {
      const ls = consoleLookups(consoleOf(g), g.name, since(g)).filter((l) => !l.ok).length;
      const ms = consoleMeta(consoleOf(g), g.name, since(g)).filter((m) => !m.ok).length;
      return `${g.name} ${ls} failed lookups, ${ms} failed metadata requests`;
    });
    log(`pvc node primary hv1 --wait: ${done - start} ms; pdns_server, 169.254.169.254, gateway and dnsmasq on hv1 only after ${moved - start} ms; `
      + `dig answered by hv1 after ${digAgain - start} ms; both guests' lookups ok after ${lookupsAgain - start} ms, metadata ok after ${metaAgain - start} ms (${failed.join('; ')})`);
    // The names stay answered across more than one AXFR period of hv1's aggregator: its dnsmasq
    // (started with the stored leases) still has them, so no pass deletes the rows.
    const holdFrom = realClock.now();
    const misses: string[] = [];
    while (realClock.now() - holdFrom < 12_000) {
      for (const g of [A, B]) if (dig(floating.upstream, fqdn(g)).join() !== g.ip) misses.push(`${g.name} at +${realClock.now() - holdFrom} ms`);
      await realClock.sleep(500);
    }
    assert.deepEqual(misses, [], 'both names answered by hv1 for 12 s (more than one 10 s pass)');
    const [dnsRows, profiles] = [pg!.sql(`SELECT count(*) FROM records r JOIN domains d ON d.id = r.domain_id WHERE d.name = '${DOMAIN}' AND r.type = 'A'`, DB_USERS.dns.name), pg!.sql('SELECT count(*) FROM profile', DB_USERS.metadata.name)];
    log(`PostgreSQL: ${dnsRows} A records of ${DOMAIN}, ${profiles} profiles`);
  });

  it('no VM ever ran on two hosts; no node fenced', async () => {
    const { zk, cluster } = fc!;
    await fc!.watch.stop();
    log(`DoubleRunWatch: ${fc!.watch.polls} polls, ${fc!.watch.unconfirmed.length} unconfirmed, ${fc!.watch.activeOnTwo.length} active on two`);
    assert.ok(fc!.watch.polls > 20, 'the invariant was actually polled');
    assert.deepEqual(fc!.watch.violations, []);
    const states = await Promise.all(cluster.hosts.map(async (h) => `${h.name}=${(await zk.read(paths.node(h.name).daemonState)) ?? 'absent'}`));
    assert.deepEqual(states, cluster.hosts.map((h) => `${h.name}=run`));
  });
});
