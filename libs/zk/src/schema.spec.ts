import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZkPathError } from './errors.js';
import { newDomainObject, newNetworkObject, newNodeObject } from './objects.js';
import { baseKeys, locks, paths, SCHEMA_VERSION } from './schema.js';

describe('schema v15 paths', () => {
  it('builds the original key names', () => {
    assert.equal(SCHEMA_VERSION, 15);
    assert.equal(paths.node('hv1').keepalive, '/nodes/hv1/keepalive');
    assert.equal(paths.node('hv1').domainsCount, '/nodes/hv1/domainscount');
    assert.equal(paths.node('hv1').sriovVf, '/nodes/hv1/sriov/vf');
    assert.equal(paths.node('hv1').sriovVfDevice('ens1f0v3').usedBy, '/nodes/hv1/sriov/vf/ens1f0v3/used_by');
    assert.equal(paths.node('hv1').sriovVfDevice('ens1f0v3').vlanId, '/nodes/hv1/sriov/vf/ens1f0v3/config/vlan_id');
    assert.equal(paths.node('hv1').monitoringPlugin('disk').healthDelta, '/nodes/hv1/monitoring_data/disk/health_delta');
    assert.equal(paths.domain('u1').state, '/domains/u1/state');
    assert.equal(paths.domain('u1').lastNode, '/domains/u1/lastnode');
    assert.equal(paths.domain('u1').tag('prod').protected, '/domains/u1/tags/prod/protected');
    assert.equal(paths.domain('u1').snapshot('s1').rbdSnapList, '/domains/u1/snapshots/s1/rbdsnaplist');
    assert.equal(paths.network(100).type, '/networks/100/nettype');
    assert.equal(paths.network(100).lease('aa:bb').clientId, '/networks/100/dhcp4_leases/aa:bb/clientid');
    assert.equal(paths.network(100).firewallRule('in', 'allow ssh').order, '/networks/100/firewall_rules/in/allow ssh/order');
    assert.equal(paths.config.primaryNode, '/config/primary_node');
    assert.equal(paths.config.fenceLock, '/config/fence_lock');
    assert.equal(paths.config.primaryNodeSyncLock, '/config/primary_node/sync_lock');
    assert.equal(paths.ceph.osd(3).fsidCluster, '/ceph/osds/3/fsid/cluster');
    assert.equal(paths.ceph.snapshot('vms', 'disk0', 'snap').stats, '/ceph/snapshots/vms/disk0/snap/stats');
    assert.equal(paths.logs.node('hv1').messages, '/logs/hv1/messages');
    assert.equal(paths.faults.fault('abc').ackTime, '/faults/abc/ack_time');
  });

  it('rejects arguments that are not one path segment', () => {
    for (const bad of ['', 'a/b', '..', '.']) {
      assert.throws(() => paths.node(bad), ZkPathError, JSON.stringify(bad));
    }
  });

  it('lists base keys parents-first and the lock inventory', () => {
    const keys = baseKeys();
    assert.equal(keys.length, 21);
    for (const k of keys) {
      const parent = k.slice(0, k.lastIndexOf('/'));
      if (parent !== '') assert.ok(keys.indexOf(parent) < keys.indexOf(k), `${parent} before ${k}`);
    }
    assert.deepEqual(locks.fence, { path: '/config/fence_lock', kind: 'exclusive' });
    assert.deepEqual(locks.primarySyncRead, { path: '/config/primary_node/sync_lock', kind: 'read' });
    assert.deepEqual(locks.nodeDaemonState('hv2'), { path: '/nodes/hv2/daemonstate', kind: 'write' });
    assert.deepEqual(locks.domainMigrateSync('u1'), { path: '/domains/u1/migrate_sync_lock', kind: 'exclusive' });
  });
});

describe('whole-object definitions', () => {
  it('a new node has the original defaults', () => {
    const o = newNodeObject({
      name: 'hv1',
      daemonMode: 'coordinator',
      nowMs: 1_700_000_000_999,
      staticData: '8 6.1.0 debian x86_64',
      pvcVersion: '1.0.3',
      ipmi: { hostname: 'lom', username: 'u', password: 'p' },
    });
    const m = new Map(o.entries);
    assert.equal(o.root, '/nodes/hv1');
    assert.equal(m.get(''), 'coordinator');
    assert.equal(m.get('keepalive'), '1700000000');
    assert.equal(m.get('daemonstate'), 'init');
    assert.equal(m.get('routerstate'), 'secondary');
    assert.equal(m.get('domainstate'), 'flushed');
    assert.equal(m.get('runningdomains'), '0');
    assert.equal(m.get('cpuload'), '0.0');
    assert.equal(m.get('memtotal'), '0');
    assert.equal(m.get('activeschema'), '15');
    assert.equal(m.get('monitoring_health'), 'None');
    assert.equal(m.size, o.entries.length, 'no duplicate keys');
    assert.equal(m.size, 30, 'root + the 29 v15 node keys');
  });

  it('a new VM carries defaults, tags and every v15 domain key', () => {
    const o = newDomainObject({ uuid: 'u1', name: 'vm1', xml: '<domain/>', node: 'hv1', tags: [{ name: 'db', type: 'user', protected: true }] });
    const m = new Map(o.entries);
    assert.equal(m.get('state'), 'stop');
    assert.equal(m.get('profile'), 'None');
    assert.equal(m.get('node_autostart'), 'False');
    assert.equal(m.get('migration_method'), 'none');
    assert.equal(m.get('migration_max_downtime'), '300');
    assert.equal(m.get('node_selector'), 'none');
    assert.equal(m.get('tags/db/protected'), 'True');
    assert.equal(m.size, 19 + 3);
  });

  it('a new network fills the original defaults', () => {
    const o = newNetworkObject({ vni: 100, description: 'lan', type: 'managed', ip6Network: 'fd00::/64', ip4Network: '10.0.0.0/24' });
    const m = new Map(o.entries);
    assert.equal(o.root, '/networks/100');
    assert.equal(m.get('domain'), 'lan.local');
    assert.equal(m.get('ip6_gateway'), 'fd00::1');
    assert.equal(m.get('dhcp6_flag'), 'True');
    assert.equal(m.get('dhcp4_flag'), 'False');
    assert.equal(m.get('ip4_gateway'), 'None');
    assert.equal(m.get('mtu'), '');
    assert.equal(m.get('firewall_rules/out'), '');
  });
});
