// netd's DNS aggregator with the real programs [root only]: a PostgreSQL (tests/support), the
// aggregator's pdns_server (gpgsql) on a loopback address and a free port, and a dnsmasq serving
// the network's auth zone on the gateway of a bridge in a throwaway namespace (hosts from an
// addn-hosts file, and DHCP leases of a busybox udhcpc client in a second namespace). The
// aggregator AXFRs through `ip netns exec`, as the primary AXFRs its own gateway. Checked through
// dig against pdns_server: names resolve, a changed host is changed and a removed one gone after
// the next pass, a new lease resolves within the period + 1 s (the figure is printed for
// docs/benchmarks.md), a stopped database is logged naming coordinator.dns.database and the
// aggregator recovers when it is back. Every wait is bounded. Fails loudly without a prerequisite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExec, createLogger, realClock } from '@pvc/runtime';
import {
  createDigAxfr, createPgDnsStore, DnsAggregator, PdnsProcess, PDNS_USER, type AggregatedNetwork, type AggregatorSettings,
} from '../../../apps/netd/src/dns/index.js';
import { freePort } from '../../support/ports.js';
import { PgTestServer } from '../../support/postgres-server.js';
import { spawnUdhcpc, udhcpcEvents, writeUdhcpcScript } from '../../support/udhcpc.js';
import { waitUntil } from '../../support/wait.js';
import { addNetns, deleteNetns, ip } from './nft-netns.js';

const ID = process.pid % 100_000;
const NS = `pvc-dnsa-${ID}`;
const CLIENT = `pvc-dnsc-${ID}`;
const DOMAIN = 'test53.local';
const GW = '10.53.0.1';
const PDNS_ADDR = '127.0.53.53';
const PERIOD_MS = 10_000;
const NETWORK: AggregatedNetwork = { vni: 53, domain: DOMAIN, server: GW, nameServers: [] };
/** A second managed network, added while pdns_server runs (its own dnsmasq on a second gateway). */
const DOMAIN2 = 'test54.local';
const GW2 = '10.53.0.2';
const NETWORK2: AggregatedNetwork = { vni: 54, domain: DOMAIN2, server: GW2, nameServers: [] };

function requireTools(): void {
  assert.equal(process.getuid?.(), 0, 'the DNS aggregator integration test needs root (namespaces, PostgreSQL as postgres, port binding)');
  for (const [cmd, ...args] of [['/usr/sbin/pdns_server', '--version'], ['/usr/bin/pdns_control', '--help'], ['dig', '-v'], ['/usr/sbin/dnsmasq', '--version'], ['busybox', 'udhcpc', '--help'], ['ip', '-V']]) {
    const r = spawnSync(cmd!, args, { encoding: 'utf8' });
    assert.equal(r.error, undefined, `${cmd} is needed (Debian packages pdns-server pdns-backend-pgsql bind9-dnsutils dnsmasq-base busybox iproute2; scripts/setup.sh): ${r.error?.message ?? ''}`);
  }
}

describe('DNS aggregator: real PostgreSQL, pdns_server, dnsmasq, dig [root only]', () => {
  let dir = '';
  let pg: PgTestServer | undefined;
  let dnsmasq: ChildProcess | undefined;
  let dnsmasq2: ChildProcess | undefined;
  const networks: AggregatedNetwork[] = [NETWORK];
  let client: ChildProcess | undefined;
  let agg: DnsAggregator | undefined;
  let pdns: PdnsProcess | undefined;
  let port = 0;
  const logs: Record<string, unknown>[] = [];
  const hostsFile = (): string => join(dir, 'hosts');

  /** dig through the aggregator's pdns_server: the addresses of `name`. */
  const resolve = (name: string, type = 'A'): string[] => {
    const r = spawnSync('dig', ['+short', '+tries=1', '+time=1', '-p', String(port), `@${PDNS_ADDR}`, name, type], { encoding: 'utf8' });
    return r.stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith(';'));
  };
  const pdnsLog = (): string => {
    try {
      return readFileSync(join(dir, 'log', 'pdns-aggregator.log'), 'utf8').split('\n').slice(-15).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const waitResolves = (name: string, want: string[], timeoutMs: number): Promise<string[]> =>
    waitUntil(() => resolve(name), { what: `${name} → ${want.join(',') || 'nothing'} through pdns_server`, timeoutMs, intervalMs: 100, until: (v) => v.join(',') === want.join(',') })
      .catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\npdns log:\n${pdnsLog()}\naggregator log:\n${logs.slice(-10).map((l) => JSON.stringify(l)).join('\n')}`);
      });
  const writeHosts = (lines: string[]): void => {
    writeFileSync(hostsFile(), lines.map((l) => `${l}\n`).join(''));
    dnsmasq?.kill('SIGHUP');
  };
  const soaSerial = (): number => Number(pg!.sql(`SELECT content FROM records r JOIN domains d ON d.id = r.domain_id WHERE d.name = '${DOMAIN}' AND r.type = 'SOA'`, 'pvcdns').split(' ')[2]);

  before(async () => {
    requireTools();
    dir = mkdtempSync(join(tmpdir(), 'pvc-dnsa-'));
    chmodSync(dir, 0o755);
    pg = new PgTestServer();
    await pg.start();
    pg.sql("CREATE ROLE pvcdns LOGIN PASSWORD 'pvcdnsPassw0rd'");
    pg.sql('CREATE DATABASE pvcdns OWNER pvcdns');

    addNetns(NS);
    ip('-n', NS, 'link', 'set', 'lo', 'up');
    ip('-n', NS, 'link', 'add', 'vmbr53', 'type', 'bridge');
    ip('-n', NS, 'address', 'add', `${GW}/24`, 'dev', 'vmbr53');
    ip('-n', NS, 'link', 'set', 'vmbr53', 'up');
    addNetns(CLIENT);
    ip('-n', NS, 'link', 'add', 'port0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', CLIENT);
    ip('-n', NS, 'link', 'set', 'port0', 'master', 'vmbr53', 'up');
    ip('-n', CLIENT, 'link', 'set', 'lo', 'up');

    writeFileSync(hostsFile(), '10.53.0.11 host1\n10.53.0.12 host2\n');
    // The auth options as apps/netd/src/dhcp/dnsmasq-args.ts writes them for an IPv4 network.
    dnsmasq = spawn('ip', ['netns', 'exec', NS, '/usr/sbin/dnsmasq', '--conf-file=/dev/null', '--keep-in-foreground', '--no-resolv', '--no-hosts',
      '--bind-interfaces', `--listen-address=${GW}`, `--domain=${DOMAIN}`, `--local=/${DOMAIN}/`, '--expand-hosts',
      `--auth-zone=${DOMAIN}`, `--auth-peer=${GW}`, `--auth-server=${GW}`, `--auth-sec-servers=${GW}`, `--addn-hosts=${hostsFile()}`,
      '--dhcp-range=10.53.0.100,10.53.0.200,1h', `--dhcp-leasefile=${join(dir, 'leases')}`, `--pid-file=${join(dir, 'dnsmasq.pid')}`,
      `--log-facility=${join(dir, 'dnsmasq.log')}`], { stdio: 'ignore' });

    port = await freePort();
    const db = { host: '127.0.0.1', port: pg.port, name: 'pvcdns', user: 'pvcdns', pass: 'pvcdnsPassw0rd' };
    const settings: AggregatorSettings = {
      database: db, listenAddresses: [PDNS_ADDR], port, socketDir: join(dir, 'run', 'pdns'), logFile: join(dir, 'log', 'pdns-aggregator.log'), upstreamDomain: 'up.local',
    };
    const logger = createLogger({ service: 'netd', destination: { write: (s: string) => void logs.push(JSON.parse(s) as Record<string, unknown>) } });
    const exec = createExec();
    pdns = new PdnsProcess({ exec, clock: realClock, logger, settings });
    agg = new DnsAggregator({
      store: createPgDnsStore(db, { connectTimeoutMs: 2_000 }),
      axfr: createDigAxfr(exec, { prefix: ['ip', 'netns', 'exec', NS] }),
      pdns,
      networks: () => Promise.resolve([...networks]),
      clock: realClock,
      logger,
      upstreamDomain: settings.upstreamDomain,
      periodMs: PERIOD_MS,
      retry: { firstMs: 1_000, maxMs: 4_000 },
    });
  });

  after(async () => {
    const steps: [string, () => unknown][] = [
      ['aggregator', () => agg?.stop('test over')],
      ['udhcpc', () => client?.kill('SIGKILL')],
      ['dnsmasq', () => dnsmasq?.kill('SIGKILL')],
      ['second dnsmasq', () => dnsmasq2?.kill('SIGKILL')],
      ['namespaces', () => [CLIENT, NS].forEach(deleteNetns)],
      ['PostgreSQL', () => pg?.close()],
      ['temp dir', () => dir && rmSync(dir, { recursive: true, force: true })],
    ];
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (err) {
        console.error(`clean-up of ${what} failed: ${(err as Error).message}`);
      }
    }
  });

  test('started as a duty: the schema loaded, the zone with SOA and NS as the original, the hosts resolving through pdns_server', async () => {
    const duty = agg!.duty();
    const t0 = Date.now();
    await duty.start();
    assert.ok(Date.now() - t0 < 500, 'the duty start does not wait for the database or pdns_server');
    assert.deepEqual(await waitResolves(`host1.${DOMAIN}`, ['10.53.0.11'], 20_000), ['10.53.0.11']);
    assert.deepEqual(resolve(`host2.${DOMAIN}`), ['10.53.0.12']);
    assert.equal(pg!.sql(`SELECT type || ' ' || account FROM domains WHERE name = '${DOMAIN}'`, 'pvcdns'), 'MASTER internal');
    assert.deepEqual(resolve(DOMAIN, 'NS'), ['pvc-dns.up.local.']);
    assert.match(resolve(DOMAIN, 'SOA')[0] ?? '', /^nsX\.up\.local\. root\.up\.local\. \d+ 10800 1800 86400 86400$/);
    assert.ok(soaSerial() >= 2, 'the first fill bumped the serial');
    assert.equal(pdns!.state, 'running');
    assert.ok(logs.some((l) => l.msg === 'PowerDNS schema loaded into coordinator.dns.database'));
  });

  test('pdns_server runs as the pdns user, not root (it bound its port and read the password file first)', () => {
    const want = spawnSync('id', ['-u', PDNS_USER], { encoding: 'utf8' }).stdout.trim();
    assert.match(want, /^\d+$/, `no ${PDNS_USER} user (Debian package pdns-server creates it)`);
    const pids = spawnSync('pgrep', ['-f', `pdns_server --config-dir=${join(dir, 'run', 'pdns')}`], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);
    assert.equal(pids.length, 1, `one pdns_server of this test, found: ${pids.join(', ')}`);
    const uids = readFileSync(`/proc/${pids[0]}/status`, 'utf8').match(/^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m)?.slice(1);
    assert.deepEqual(uids, [want, want, want, want], 'real, effective, saved and filesystem uid are the pdns user');
  });

  test('a changed host is changed and a removed one gone after the next pass; the serial bumped', async () => {
    const serial = soaSerial();
    writeHosts(['10.53.0.21 host1']);
    await waitResolves(`host1.${DOMAIN}`, ['10.53.0.21'], PERIOD_MS + 5_000);
    await waitResolves(`host2.${DOMAIN}`, [], 2_000);
    assert.ok(soaSerial() > serial);
  });

  test('a new DHCP lease resolves through the aggregator within the period + 1 s (3 leases at different points of the cycle, figures printed)', async () => {
    const script = writeUdhcpcScript(dir);
    const times: number[] = [];
    // Each lease starts at another point of the pass cycle: 0, 3 and 6 s after the previous name resolved.
    for (const [i, name] of ['vm1', 'vm2', 'vm3'].entries()) {
      await new Promise((r) => setTimeout(r, i * 3_000));
      const events = join(dir, `events-${name}`);
      client?.kill('SIGKILL');
      ip('-n', CLIENT, 'link', 'set', 'eth0', 'down');
      ip('-n', CLIENT, 'address', 'flush', 'dev', 'eth0');
      ip('-n', CLIENT, 'link', 'set', 'eth0', 'address', `52:54:00:53:00:0${i + 1}`);
      ip('-n', CLIENT, 'link', 'set', 'eth0', 'up');
      client = spawnUdhcpc(CLIENT, script, events, ['-x', `hostname:${name}`]);
      const bound = await waitUntil(() => udhcpcEvents(events).find((e) => e.event === 'bound'), { what: `the lease of ${name}`, timeoutMs: 20_000, intervalMs: 20 });
      const leasedAt = Date.now();
      await waitResolves(`${name}.${DOMAIN}`, [bound!.ip], PERIOD_MS + 5_000);
      times.push(Date.now() - leasedAt);
    }
    console.log(`lease → resolvable through the aggregator (period ${PERIOD_MS} ms): ${times.map((t) => `${t} ms`).join(', ')}`);
    for (const t of times) assert.ok(t <= PERIOD_MS + 1_000 + 300, `${t} ms exceeds the period + 1 s (+ 0.3 s of polling)`);
  });

  test('a network added while pdns_server runs: its zone answers at the next passes, not after PowerDNS’s zone cache refresh', async () => {
    ip('-n', NS, 'address', 'add', `${GW2}/24`, 'dev', 'vmbr53');
    writeFileSync(join(dir, 'hosts2'), '10.53.0.41 newhost\n');
    dnsmasq2 = spawn('ip', ['netns', 'exec', NS, '/usr/sbin/dnsmasq', '--conf-file=/dev/null', '--keep-in-foreground', '--no-resolv', '--no-hosts',
      '--bind-interfaces', `--listen-address=${GW2}`, `--domain=${DOMAIN2}`, `--local=/${DOMAIN2}/`, '--expand-hosts', '--port=53',
      `--auth-zone=${DOMAIN2}`, `--auth-peer=${GW2}`, `--auth-server=${GW2}`, `--auth-sec-servers=${GW2}`, `--addn-hosts=${join(dir, 'hosts2')}`,
      `--pid-file=${join(dir, 'dnsmasq2.pid')}`, `--log-facility=${join(dir, 'dnsmasq2.log')}`], { stdio: 'ignore' });
    // Asked before the zone exists (a negative answer PowerDNS may cache), then the network appears.
    assert.deepEqual(resolve(`newhost.${DOMAIN2}`), []);
    const added = Date.now();
    networks.push(NETWORK2);
    await waitResolves(`newhost.${DOMAIN2}`, ['10.53.0.41'], 3 * PERIOD_MS);
    const took = Date.now() - added;
    console.log(`network added → its name resolvable through the aggregator (period ${PERIOD_MS} ms): ${took} ms`);
    // The target is the next pass (period + 1 s, printed); the assertion is the behaviour: answered
    // within two passes, not after PowerDNS's zone cache refresh (300 s by default) — a timed bound
    // at the period would fail on a loaded machine for a pass that merely ran long.
    assert.ok(took <= 2 * PERIOD_MS + 2_000, `${took} ms: not answered within two passes (PowerDNS did not learn the new zone)`);
  });

  test('database stopped: errors naming coordinator.dns.database, retried with backoff; back: pdns and the aggregator recover', async () => {
    const before = logs.length;
    pg!.stop();
    writeHosts(['10.53.0.21 host1', '10.53.0.33 host3']);
    const dbErrors = (): Record<string, unknown>[] => logs.slice(before).filter((l) => l.level === 50 && /coordinator\.dns\.database/.test(String(l.msg)));
    await waitUntil(() => dbErrors().length >= 3, { what: 'three pass failures naming coordinator.dns.database', timeoutMs: PERIOD_MS + 15_000 });
    // Backoff: 1 s, then 2 s between the attempts.
    const [t1, t2, t3] = dbErrors().map((l) => Date.parse(String(l.time)));
    assert.ok(t3! - t2! > 1.5 * (t2! - t1!), `the pause grows: ${t2! - t1!} ms, then ${t3! - t2!} ms`);
    assert.match(String(dbErrors()[0]!.msg), /^DNS aggregator pass failed: coordinator\.dns\.database: .*"pvcdns" at 127\.0\.0\.1:\d+ as "pvcdns" failed/);
    assert.equal(agg!.state, 'failing');
    assert.ok(!JSON.stringify(logs).includes('pvcdnsPassw0rd'), 'the password is never logged');
    await pg!.start();
    await waitResolves(`host3.${DOMAIN}`, ['10.53.0.33'], 30_000);
    assert.deepEqual(resolve(`host1.${DOMAIN}`), ['10.53.0.21']);
    // The zone is filled before the pass ends and the state changes.
    await waitUntil(() => agg!.state === 'running', { what: 'the aggregator running again', timeoutMs: 10_000 });
    assert.equal(pdns!.state, 'running');
    const failures = dbErrors().length;
    assert.ok(failures >= 2, `${failures} failures logged`);
  });
});
