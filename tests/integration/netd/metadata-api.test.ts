/**
 * netd's metadata API against a real Zookeeper and a real PostgreSQL holding the provisioner's
 * tables (as the original's api-daemon models define them), served on a loopback address: the
 * source address of each request (`localAddress` 127.0.0.x) selects the VM through its lease, so
 * each guest gets only its own data and an unknown one 404; the database stopped → user-data 503
 * and one error line naming `coordinator.metadata.database` (never the password); started again →
 * 200 within a bound.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { captureLogger, realClock } from '@pvc/runtime';
import { baseKeys, connectZk, leaseKeys, newDomainObject, newNetworkObject, paths, type ZkClient } from '@pvc/zk';
import { buildMetadataApi, createPgUserData, type MetadataApi, type MetadataHttpServer } from '../../../apps/netd/src/metadata/index.js';
import { PgTestServer } from '../../support/postgres-server.js';
import { provisionerSchema } from '../../support/provisioner-db.js';
import { ZkTestServer } from '../../support/zk-server.js';

const PASS = 'md-Passw0rd-secret';
const A = { uuid: 'aaaaaaaa-0000-4000-8000-000000000005', name: 'web1', mac: '52:54:00:00:00:05', ip: '127.0.0.5', profile: 'web' };
const B = { uuid: 'bbbbbbbb-0000-4000-8000-000000000006', name: 'db1', mac: '52:54:00:00:00:06', ip: '127.0.0.6', profile: 'db' };

/** The provisioner's tables (tests/support/provisioner-db.ts) with a profile per guest and one without user-data. */
const SCHEMA = provisionerSchema('pvcapi', [
  { profile: 'web', userdata: '#cloud-config\nhostname: web1\n' },
  { profile: 'db', userdata: '#cloud-config\nhostname: db1\n' },
  { profile: 'bare', userdata: null },
]);

interface Reply { status: number; body: string }

function get(port: number, path: string, localAddress: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, localAddress, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path} within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

async function until(what: string, ms: number, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function seed(zk: ZkClient): Promise<void> {
  for (const k of baseKeys()) await zk.ensurePath(k);
  const n = newNetworkObject({ vni: 100, description: 'guests', type: 'managed', ip4Network: '10.100.0.0/24', ip4Gateway: '10.100.0.1', dhcp4: true, dhcp4Start: '10.100.0.100', dhcp4End: '10.100.0.199' });
  await zk.createObject(n.root, n.entries);
  const xml = (name: string, mac: string): string => `<domain type='kvm'><name>${name}</name><devices><interface type='bridge'><mac address='${mac}'/><source bridge='vmbr100'/></interface></devices></domain>`;
  for (const v of [A, B]) {
    const d = newDomainObject({ uuid: v.uuid, name: v.name, node: 'hv1', xml: xml(v.name, v.mac), profile: v.profile });
    await zk.createObject(d.root, d.entries);
  }
  // A domain whose XML does not parse (skipped), and a lease whose MAC is on no VM.
  const broken = newDomainObject({ uuid: 'cccccccc-0000-4000-8000-000000000007', name: 'broken', node: 'hv1', xml: `<domain type='kvm'><devices><interface type='bridge'><mac address='52:54:00:00:00:07'/>` });
  await zk.createObject(broken.root, broken.entries);
  for (const [mac, ip] of [[A.mac, A.ip], [B.mac, B.ip], ['52:54:00:00:00:07', '127.0.0.7']] as const) {
    const l = leaseKeys(100, mac);
    await zk.write([[l.root.path, ''], [l.expiry.path, '0'], [l.ipaddr.path, ip], [l.hostname.path, 'guest'], [l.clientId.path, '*']]);
  }
}

describe('metadata API with a real Zookeeper and PostgreSQL [root only]', () => {
  let zkServer: ZkTestServer;
  let pg: PgTestServer;
  let zk: ZkClient;
  let api: MetadataApi;
  let server: MetadataHttpServer;
  const log = captureLogger('netd');

  before(async () => {
    assert.equal(process.getuid?.(), 0, 'needs root (runs PostgreSQL as postgres)');
    zkServer = await ZkTestServer.start();
    pg = new PgTestServer();
    await pg.start();
    pg.sql(`CREATE ROLE pvcapi LOGIN PASSWORD '${PASS}'`);
    pg.sql('CREATE DATABASE pvcapi OWNER pvcapi');
    pg.sql(SCHEMA, 'pvcapi');
    zk = await connectZk({ hosts: [zkServer.hostPort], clock: realClock });
    await seed(zk);
    const built = buildMetadataApi({
      zk, clock: realClock, logger: log.logger, host: '127.0.0.1', port: 0, dbRetry: { firstMs: 200, maxMs: 1_000 },
      userData: createPgUserData({ host: '127.0.0.1', port: pg.port, name: 'pvcapi', user: 'pvcapi', pass: PASS }, { connectTimeoutMs: 2_000 }),
    });
    ({ api, server } = built);
    await api.start();
    assert.equal(api.current, 'serving');
    await until('the database probed', 10_000, () => Promise.resolve(built.userData.current.kind === 'up'));
  });

  after(async () => {
    await api?.stop();
    await zk?.close();
    pg?.close();
    await zkServer?.stop();
  });

  it('the banner: 209 JSON', async () => {
    const r = await get(server.port, '/', '127.0.0.9');
    assert.deepEqual(r, { status: 209, body: '{"message":"PVC Provisioner Metadata API version 1"}' });
  });

  it('each guest gets only its own meta-data and user-data, chosen by its source address', async () => {
    for (const v of [A, B]) {
      assert.deepEqual(await get(server.port, '/latest/meta-data/', v.ip), { status: 200, body: 'instance-id\nname\nprofile' });
      assert.deepEqual(await get(server.port, '/latest/meta-data/instance-id', v.ip), { status: 200, body: v.uuid });
      assert.deepEqual(await get(server.port, '/2009-04-04/meta-data/name', v.ip), { status: 200, body: v.name });
      assert.deepEqual(await get(server.port, '/latest/meta-data/profile', v.ip), { status: 200, body: v.profile });
      assert.deepEqual(await get(server.port, '/latest/user-data', v.ip), { status: 200, body: `#cloud-config\nhostname: ${v.name}\n` });
    }
  });

  it('an unknown caller (127.0.0.9), a lease whose MAC is on no VM (127.0.0.7): 404, nothing of another VM', async () => {
    for (const ip of ['127.0.0.9', '127.0.0.7']) {
      for (const path of ['/latest/meta-data/', '/latest/meta-data/instance-id', '/latest/meta-data/name', '/latest/user-data']) {
        const r = await get(server.port, path, ip);
        assert.equal(r.status, 404, `${ip} ${path}`);
        assert.doesNotMatch(r.body, /web1|db1|cloud-config|aaaaaaaa|bbbbbbbb/);
      }
    }
    assert.ok(log.lines.some((l) => l.key === '/domains/cccccccc-0000-4000-8000-000000000007/xml' && l.effect === 'domain skipped'), 'the broken domain is logged by key');
  });

  it('a profile with no user-data row: 200 empty', async () => {
    await zk.write([[paths.domain(A.uuid).profile, 'bare']]);
    try {
      assert.deepEqual(await get(server.port, '/latest/user-data', A.ip), { status: 200, body: '' });
    } finally {
      await zk.write([[paths.domain(A.uuid).profile, A.profile]]);
    }
  });

  it('PostgreSQL stopped: user-data 503 with one error line naming coordinator.metadata.database (no password), meta-data still served; started again: 200 within 15 s', async () => {
    const before = log.lines.length;
    pg.stop();
    assert.equal((await get(server.port, '/latest/user-data', A.ip)).status, 503);
    assert.equal((await get(server.port, '/latest/user-data', B.ip)).status, 503);
    assert.deepEqual(await get(server.port, '/latest/meta-data/name', A.ip), { status: 200, body: A.name });
    const errors = log.lines.slice(before).filter((l) => l.level === 50);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0]?.key, 'coordinator.metadata.database');
    assert.match(String(errors[0]?.msg), /^coordinator\.metadata\.database: user-data database not usable \(unreachable\)/);
    await pg.start();
    await until('user-data served again', 15_000, async () => (await get(server.port, '/latest/user-data', A.ip)).status === 200);
    assert.deepEqual(await get(server.port, '/latest/user-data', B.ip), { status: 200, body: '#cloud-config\nhostname: db1\n' });
    assert.ok(log.lines.slice(before).some((l) => /usable again/.test(String(l.msg))));
    assert.ok(!log.lines.some((l) => JSON.stringify(l).includes(PASS)), 'the password is in no log line');
  });

  it('credentials refused: 503, the error names the key and says to check .user and .pass', async () => {
    const bad = buildMetadataApi({
      zk, clock: realClock, logger: log.logger, host: '127.0.0.1', port: 0, dbRetry: { firstMs: 60_000, maxMs: 60_000 },
      userData: createPgUserData({ host: '127.0.0.1', port: pg.port, name: 'pvcapi', user: 'pvcapi', pass: 'wrong-pass-xyz' }),
    });
    const before = log.lines.length;
    await bad.api.start();
    try {
      assert.equal((await get(bad.server.port, '/latest/user-data', A.ip)).status, 503);
      await until('the refusal logged', 10_000, () => Promise.resolve(log.lines.slice(before).some((l) => l.level === 50)));
      const error = log.lines.slice(before).find((l) => l.level === 50);
      assert.equal(error?.reason, 'refused-credentials');
      assert.match(String(error?.err), /check coordinator\.metadata\.database\.user and coordinator\.metadata\.database\.pass/);
      assert.ok(!log.lines.some((l) => JSON.stringify(l).includes('wrong-pass-xyz')));
    } finally {
      await bad.api.stop();
    }
  });
});
