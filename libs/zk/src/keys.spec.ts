import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@pvc/runtime';
import { decodeKey } from './key-read.js';
import {
  cephKeys, clusterKeys, domainKeys, snapshotKeys, volumeKeys, faultKeys, logKeys, networkKeys, nodeKeys, objectKeys, osdKeys, pair, pluginKeys, poolKeys, tagKeys,
  type KeySpec,
} from './keys.js';
import { DOMAIN_KEYS, NETWORK_KEYS, NODE_KEYS, OSD_KEYS, paths, POOL_KEYS } from './schema.js';

const UUID = '0b6c3a5e-2f1d-4c7e-9a8b-1d2e3f4a5b6c';
type Table = Readonly<Record<string, KeySpec<unknown, unknown>>>;

/** Every key table of one object, with the object's root path. */
const TABLES: [string, string, Table][] = [
  ['node', paths.node('hv1').root, nodeKeys('hv1')],
  ['plugin', paths.node('hv1').monitoringPlugin('disk').root, pluginKeys('hv1', 'disk')],
  ['domain', paths.domain(UUID).root, domainKeys(UUID)],
  ['tag', paths.domain(UUID).tag('web').root, tagKeys(UUID, 'web')],
  ['network', paths.network(100).root, networkKeys(100)],
  ['log', paths.logs.node('hv1').root, logKeys('hv1')],
  ['fault', paths.faults.fault('abc123').root, faultKeys('abc123')],
  ['osd', paths.ceph.osd(3).root, osdKeys(3)],
  ['pool', paths.ceph.pool('vms').root, poolKeys('vms')],
  ['volume', paths.ceph.volume('vms', 'disk0').root, volumeKeys('vms', 'disk0')],
  ['snapshot', paths.ceph.snapshot('vms', 'disk0', 's1').root, snapshotKeys('vms', 'disk0', 's1')],
];

function allSpecs(): [string, KeySpec<unknown, unknown>][] {
  const out: [string, KeySpec<unknown, unknown>][] = Object.entries(clusterKeys).map(([n, s]) => [`cluster.${n}`, s]);
  for (const [n, s] of Object.entries(cephKeys)) out.push([`ceph.${n}`, s]);
  for (const [kind, , table] of TABLES) for (const [n, s] of Object.entries(table)) out.push([`${kind}.${n}`, s]);
  return out;
}

describe('key table', () => {
  it("every key's path is its object's root or under it", () => {
    for (const [kind, root, table] of TABLES) {
      assert.equal(table.root?.path, root, `${kind}.root`);
      for (const [name, spec] of Object.entries(table)) {
        if (name === 'root') continue;
        assert.ok(spec.path.startsWith(`${root}/`), `${kind}.${name}: ${spec.path} is not under ${root}`);
      }
    }
    for (const [name, spec] of Object.entries(clusterKeys)) {
      assert.match(spec.path, /^\/(config|schema)(\/|$)/, `cluster.${name}`);
    }
  });

  it('no two keys share a path', () => {
    const seen = new Map<string, string>();
    for (const [name, spec] of allSpecs()) {
      assert.equal(seen.get(spec.path), undefined, `${name} and ${seen.get(spec.path) ?? ''} share ${spec.path}`);
      seen.set(spec.path, name);
    }
  });

  it('every fill is empty or decodes to the fallback, and never reads as a bad value', () => {
    const warns: string[] = [];
    const logger = createLogger({ service: 'test', dates: false, destination: { write: (s: string) => void warns.push(s) } });
    for (const [name, spec] of allSpecs()) {
      const decoded = decodeKey(spec, spec.fill, logger);
      if (spec.fill !== '') assert.deepEqual(decoded, spec.fallback, `${name}: fill ${JSON.stringify(spec.fill)}`);
    }
    assert.deepEqual(warns, []);
  });

  it("the object keys' non-empty fills are the original's three defaults", () => {
    const nonEmpty: Record<string, string> = {};
    const kinds = { node: 'hv1', domain: UUID, network: '100', osd: '3', pool: 'vms' } as const;
    for (const [kind, id] of Object.entries(kinds)) {
      for (const spec of Object.values(objectKeys[kind as keyof typeof kinds](id))) {
        if (spec.fill !== '') nonEmpty[spec.path] = spec.fill;
      }
    }
    assert.deepEqual(nonEmpty, {
      [paths.domain(UUID).migrationMaxDowntime]: '300',
      [paths.ceph.osd(3).isSplit]: 'False',
      [paths.ceph.pool('vms').tier]: 'default',
    });
    assert.equal(clusterKeys.maintenance.fill, 'false', 'a base key; read with strtobool');
  });

  it('objectKeys lists every v15 key of the object (the schema table), without the root, parents first', () => {
    const cases: [string, Table, string, Record<string, string>][] = [
      ['node', objectKeys.node('hv1'), paths.node('hv1').root, NODE_KEYS],
      ['domain', objectKeys.domain(UUID), paths.domain(UUID).root, DOMAIN_KEYS],
      ['network', objectKeys.network('100'), paths.network(100).root, NETWORK_KEYS],
      ['osd', objectKeys.osd('3'), paths.ceph.osd(3).root, OSD_KEYS],
      ['pool', objectKeys.pool('vms'), paths.ceph.pool('vms').root, POOL_KEYS],
    ];
    for (const [kind, table, root, schema] of cases) {
      const listed = Object.values(table).map((s) => s.path);
      assert.deepEqual([...listed].sort(), Object.values(schema).map((rel) => `${root}/${rel}`).sort(), kind);
      assert.ok(!listed.includes(root), `${kind}: root listed`);
      listed.forEach((p, i) => {
        const parent = p.slice(0, p.lastIndexOf('/'));
        const at = listed.indexOf(parent);
        assert.ok(at < i, `${kind}: ${p} comes before its parent`);
      });
    }
  });

  it('our own node keys (networks_up) are not in the schema fill: absent means unknown', () => {
    assert.equal(nodeKeys('hv1').networksUp.fallback, undefined);
    assert.ok(!Object.values(objectKeys.node('hv1')).some((s) => s.path === paths.node('hv1').networksUp));
  });

  it('pair() encodes through the codec', () => {
    const n = nodeKeys('hv1');
    const d = domainKeys(UUID);
    assert.deepEqual(pair(n.staticData, { cpuCount: 4, kernel: '6.1.0', os: 'GNU/Linux', arch: 'x86_64' }), [n.staticData.path, '4 6.1.0 GNU/Linux x86_64']);
    assert.deepEqual(pair(n.cpuLoad, 2), [n.cpuLoad.path, '2.0']);
    assert.deepEqual(pair(n.monitoringHealth, null), [n.monitoringHealth.path, 'None']);
    assert.deepEqual(pair(n.runningDomains, ['a', 'b']), [n.runningDomains.path, 'a b']);
    assert.deepEqual(pair(n.networksUp, [1200, 1100]), ['/nodes/hv1/networks_up', '1100 1200']);
    assert.deepEqual(pair(n.daemonState, 'init'), [n.daemonState.path, 'init']);
    assert.deepEqual(pair(d.nodeAutostart, true), [d.nodeAutostart.path, 'True']);
    assert.deepEqual(pair(d.nodeLimit, ['hv1', 'hv2']), [d.nodeLimit.path, 'hv1,hv2']);
    assert.deepEqual(pair(clusterKeys.maintenance, true), [clusterKeys.maintenance.path, 'true']);
    assert.deepEqual(pair(osdKeys(3).isSplit, false), [osdKeys(3).isSplit.path, 'False']);
    assert.deepEqual(pair(networkKeys(100).mtu, null), [networkKeys(100).mtu.path, '']);
    assert.throws(() => pair(n.keepalive, 1.5), RangeError, 'an int key refuses a fraction');
  });
});
