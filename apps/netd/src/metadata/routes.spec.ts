import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger } from '@pvc/runtime';
import type { CallerLookup } from '@pvc/zk';
import { FakeUserData } from './fake-user-data.js';
import { answerMetadata, BANNER, routeOf, type MetadataAnswerDeps } from './routes.js';

const WEB: CallerLookup = { kind: 'found', vm: { uuid: 'aaaaaaaa-0000-4000-8000-000000000001', name: 'web1', profile: 'cloud' }, mac: '52:54:00:00:00:0a', vni: 100 };
const BARE: CallerLookup = { kind: 'found', vm: { uuid: 'bbbbbbbb-0000-4000-8000-000000000002', name: 'db1', profile: null }, mac: '52:54:00:00:00:0b', vni: 100 };

function rig(callers: Record<string, CallerLookup> = { '10.100.0.150': WEB, '10.100.0.151': BARE }) {
  const { logger, lines } = captureLogger();
  const db = new FakeUserData();
  db.profiles.set('cloud', '#cloud-config\nhostname: web1\n');
  const asked: string[] = [];
  const deps: MetadataAnswerDeps = {
    identify: (c) => {
      asked.push(c);
      if (c === '10.0.0.99') return Promise.reject(new Error('Zookeeper: connection loss'));
      return Promise.resolve(callers[c] ?? { kind: 'unknown-address' });
    },
    userData: (p) => db.forProfile(p),
    logger,
  };
  const get = (url: string, caller = '10.100.0.150', method = 'GET') => answerMetadata({ method, url, caller }, deps);
  return { get, db, lines, asked };
}

describe('metadata routes', () => {
  it('routeOf: the original routes under any version segment; the query string is ignored', () => {
    assert.deepEqual(routeOf('/'), { kind: 'banner' });
    assert.deepEqual(routeOf('/latest/meta-data/'), { kind: 'meta-index' });
    assert.deepEqual(routeOf('/2009-04-04/meta-data'), { kind: 'meta-index' });
    assert.deepEqual(routeOf('/1.0/meta-data/instance-id?x=1'), { kind: 'meta-key', key: 'instance-id' });
    assert.deepEqual(routeOf('/latest/meta-data/name'), { kind: 'meta-key', key: 'name' });
    assert.deepEqual(routeOf('/latest/meta-data/profile'), { kind: 'meta-key', key: 'profile' });
    assert.deepEqual(routeOf('/latest/user-data'), { kind: 'user-data' });
    for (const u of ['/latest', '/latest/meta-data/public-keys', '/a/b/user-data', '//user-data', '/latest/user-data/', '/latest/api/token']) assert.deepEqual(routeOf(u), { kind: 'none' }, u);
  });

  it('the banner: 209 JSON, to anyone, without a lookup', async () => {
    const { get, asked } = rig();
    assert.deepEqual(await get('/', '10.9.9.9'), { status: 209, contentType: 'application/json', body: BANNER });
    assert.deepEqual(JSON.parse(BANNER), { message: 'PVC Provisioner Metadata API version 1' });
    assert.deepEqual(asked, []);
  });

  it('meta-data: the index, instance-id, name and profile of the caller\'s VM; profile None → empty', async () => {
    const { get } = rig();
    assert.equal((await get('/latest/meta-data/')).body, 'instance-id\nname\nprofile');
    assert.deepEqual(await get('/latest/meta-data/instance-id'), { status: 200, contentType: 'text/plain; charset=utf-8', body: WEB.kind === 'found' ? WEB.vm.uuid : '' });
    assert.equal((await get('/latest/meta-data/name')).body, 'web1');
    assert.equal((await get('/latest/meta-data/profile')).body, 'cloud');
    assert.deepEqual(await get('/latest/meta-data/profile', '10.100.0.151'), { status: 200, contentType: 'text/plain; charset=utf-8', body: '' });
    assert.equal((await get('/latest/meta-data/name', '10.100.0.151')).body, 'db1', 'each caller gets its own VM');
  });

  it('user-data: the profile\'s user-data; none (no profile, or no row) → 200 empty, as the original', async () => {
    const { get, db } = rig();
    assert.deepEqual(await get('/latest/user-data'), { status: 200, contentType: 'text/plain; charset=utf-8', body: '#cloud-config\nhostname: web1\n' });
    assert.deepEqual(await get('/latest/user-data', '10.100.0.151'), { status: 200, contentType: 'text/plain; charset=utf-8', body: '' });
    assert.deepEqual(db.calls, ['forProfile cloud'], 'no profile: the database is not asked');
    db.profiles.clear();
    assert.equal((await get('/latest/user-data')).body, '');
  });

  it('an unknown caller, a caller whose MAC is on no VM, an ambiguous caller: 404 on every /<ver>/ route, nothing of any VM', async () => {
    const { get, lines } = rig({
      '10.100.0.150': WEB,
      '10.100.0.160': { kind: 'no-vm', mac: '52:54:00:00:00:ff' },
      '10.100.0.170': { kind: 'ambiguous', why: 'MAC 52:54:00:00:00:0d is on the NICs of VMs a, b' },
    });
    for (const caller of ['10.100.0.9', '10.100.0.160', '10.100.0.170']) {
      for (const url of ['/latest/meta-data/', '/latest/meta-data/instance-id', '/latest/meta-data/name', '/latest/meta-data/profile', '/latest/user-data']) {
        const r = await get(url, caller);
        assert.equal(r.status, 404, `${caller} ${url}`);
        assert.doesNotMatch(r.body, /web1|aaaaaaaa|cloud/);
      }
    }
    assert.ok(lines.some((l) => l.level === 40 && l.caller === '10.100.0.170' && /refused \(404\): MAC 52:54:00:00:00:0d/.test(String(l.msg))));
    assert.ok(lines.some((l) => l.caller === '10.100.0.160' && /MAC 52:54:00:00:00:ff is on no VM/.test(String(l.msg))));
  });

  it('the database down → user-data 503 (meta-data still served); Zookeeper failing → 503', async () => {
    const { get, db } = rig();
    db.down = 'unreachable';
    assert.equal((await get('/latest/user-data')).status, 503);
    assert.equal((await get('/latest/meta-data/name')).body, 'web1');
    assert.equal((await get('/latest/meta-data/name', '10.0.0.99')).status, 503);
  });

  it('unknown paths 404 whatever the method; other methods than GET/HEAD on a route 405', async () => {
    const { get } = rig();
    assert.equal((await get('/latest/api/token', '10.100.0.150', 'PUT')).status, 404);
    const r = await get('/latest/user-data', '10.100.0.150', 'POST');
    assert.equal(r.status, 405);
    assert.deepEqual(r.headers, { allow: 'GET, HEAD' });
    assert.equal((await get('/latest/meta-data/name', '10.100.0.150', 'HEAD')).status, 200);
  });
});
