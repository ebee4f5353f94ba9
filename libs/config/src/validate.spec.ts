import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from './errors.js';
import { DELETE, mutate, sampleDoc, sampleText } from './testing/sample.js';
import { parseConfig, validateConfig } from './validate.js';

const SYSNET = 'pvc.system.configuration.networking';

test('the sample file validates unchanged, with every documented value', () => {
  const config = parseConfig(sampleText(), 'sample.yaml');
  assert.equal(config.source, 'sample.yaml');
  assert.equal(config.node, 'pvchv1');
  assert.equal(config.debug, false);
  assert.deepEqual(config.functions, { enable_hypervisor: true, enable_networking: true, enable_storage: true, enable_api: true });
  assert.deepEqual(config.cluster.coordinators, ['pvchv1', 'pvchv2', 'pvchv3']);
  assert.deepEqual(config.cluster.networks?.upstream, {
    domain: 'mydomain.net',
    network: '1.1.1.0/24',
    floating_ip: '1.1.1.10/24',
    gateway: '1.1.1.1',
  });
  assert.equal(config.coordinator?.metadata.database.name, 'pvcapi');
  assert.deepEqual(config.system.fencing.intervals, { keepalive_interval: 5, fence_intervals: 6, suicide_intervals: 0 });
  assert.deepEqual(config.system.fencing.actions, { successful_fence: 'migrate', failed_fence: 'none' });
  assert.equal(config.system.migration.target_selector, 'mem');
  assert.equal(config.system.configuration.logging.console_log_lines, 1000);
  assert.deepEqual(config.system.configuration.networking?.sriov_device, [{ phy: 'ens1f0', mtu: 9000, vfcount: 7 }]);
});

test('defaults fill every optional key, including our additions', () => {
  const config = validateConfig(
    mutate(
      ['pvc.functions.enable_api', DELETE],
      ['pvc.system.fencing.intervals.suicide_intervals', DELETE],
      ['pvc.system.configuration.directories.plugin_directory', DELETE],
      ['pvc.system.configuration.logging.log_keepalive_plugin_details', DELETE],
      ['pvc.system.configuration.logging.zookeeper_logging', DELETE],
      ['pvc.system.configuration.logging.node_log_lines', DELETE],
      [`${SYSNET}.sriov_enable`, DELETE],
      [`${SYSNET}.sriov_device`, DELETE],
      [`${SYSNET}.bridge_mtu`, DELETE],
    ),
  );
  assert.equal(config.functions.enable_api, false);
  assert.equal(config.system.fencing.intervals.suicide_intervals, 0);
  assert.equal(config.system.configuration.directories.plugin_directory, '/usr/share/pvc/plugins');
  assert.equal(config.system.configuration.logging.log_keepalive_plugin_details, true);
  assert.equal(config.system.configuration.logging.log_keepalive_storage_details, true);
  assert.equal(config.system.configuration.logging.zookeeper_logging, true);
  assert.equal(config.system.configuration.logging.node_log_lines, 2000);
  assert.equal(config.system.configuration.networking?.sriov_enable, false);
  assert.deepEqual(config.system.configuration.networking?.sriov_device, []);
  assert.equal(config.system.configuration.networking?.bridge_mtu, undefined);
  assert.deepEqual(config.system.configuration.hypervisor, {
    domain_type: 'kvm',
    libvirt_uri: 'qemu+tcp://pvchv1/system',
    vm_shutdown_timeout: 180,
  });
  assert.equal(config.database.zookeeper.port, 2181);
  assert.equal(config.system.fencing.ipmi.port, 623);
  assert.equal(config.system.fencing.peer_check_port, 7374);
});

test('our additions can be set', () => {
  const config = validateConfig(
    mutate(
      ['pvc.system.configuration.hypervisor', { domain_type: 'qemu', libvirt_uri: 'qemu:///system', vm_shutdown_timeout: 30 }],
      ['pvc.database.zookeeper.port', 12181],
      ['pvc.system.fencing.ipmi.port', 1623],
    ),
  );
  assert.deepEqual(config.system.configuration.hypervisor, {
    domain_type: 'qemu',
    libvirt_uri: 'qemu:///system',
    vm_shutdown_timeout: 30,
  });
  assert.equal(config.zkConnectString, 'pvchv1:12181,pvchv2:12181,pvchv3:12181');
  assert.equal(config.system.fencing.ipmi.port, 1623);
});

test('peer_check_port (our addition): a port, or 0 for off; anything else is a problem naming the key', () => {
  assert.equal(validateConfig(mutate(['pvc.system.fencing.peer_check_port', 0])).system.fencing.peer_check_port, 0);
  assert.equal(validateConfig(mutate(['pvc.system.fencing.peer_check_port', '17374'])).system.fencing.peer_check_port, 17374);
  for (const bad of [65536, -1, 'seven']) {
    assert.throws(
      () => validateConfig(mutate(['pvc.system.fencing.peer_check_port', bad])),
      (err: unknown) => err instanceof ConfigError && /pvc\.system\.fencing\.peer_check_port: expected a port number from 1 to 65535, or 0 \(off\)/.test(err.message),
    );
  }
});

test('the older log_keepalive_storage_details key is accepted', () => {
  const config = validateConfig(mutate(['pvc.system.configuration.logging.log_keepalive_storage_details', false]));
  assert.equal(config.system.configuration.logging.log_keepalive_storage_details, false);
});

test('booleans accept YAML booleans and the Python-style strings', () => {
  const config = validateConfig(
    mutate(['pvc.debug', 'True'], ['pvc.functions.enable_api', 'False'], ['pvc.functions.enable_storage', false]),
  );
  assert.equal(config.debug, true);
  assert.equal(config.functions.enable_api, false);
  assert.equal(config.functions.enable_storage, false);
});

test('fence actions accept None, none and null, all normalised to none', () => {
  for (const raw of ['None', 'none', null]) {
    const config = validateConfig(mutate(['pvc.system.fencing.actions.successful_fence', raw]));
    assert.equal(config.system.fencing.actions.successful_fence, 'none');
  }
  const migrating = validateConfig(
    mutate(['pvc.system.fencing.actions.failed_fence', 'migrate'], ['pvc.system.fencing.intervals.suicide_intervals', 3]),
  );
  assert.equal(migrating.system.fencing.actions.failed_fence, 'migrate');
});

test('integers accept digit strings as Python int() did', () => {
  const config = validateConfig(mutate(['pvc.system.fencing.intervals.keepalive_interval', '10']));
  assert.equal(config.system.fencing.intervals.keepalive_interval, 10);
});

test('domains accept None', () => {
  const config = validateConfig(mutate(['pvc.cluster.networks.storage.domain', 'None']));
  assert.equal(config.cluster.networks?.storage.domain, null);
});

test('addresses are a discriminated union, resolved per network', () => {
  const config = validateConfig(mutate([`${SYSNET}.upstream.address`, '1.1.1.21/24']));
  const n = config.system.configuration.networking;
  assert.ok(n);
  assert.deepEqual(n.upstream.address, { kind: 'static', cidr: '1.1.1.21/24' });
  assert.deepEqual(n.upstream.resolved, { ip: '1.1.1.21', prefix: 24, cidr: '1.1.1.21/24' });
  assert.deepEqual(n.cluster.address, { kind: 'by-id' });
  assert.deepEqual(n.cluster.resolved, { ip: '10.255.0.1', prefix: 24, cidr: '10.255.0.1/24' });
  const none = validateConfig(sampleDoc()).system.configuration.networking?.upstream;
  assert.deepEqual(none?.address, { kind: 'none' });
  assert.equal(none?.resolved, null);
});

test('by-id picks the host numbered by the trailing digits of the node name', () => {
  const config = validateConfig(
    mutate(
      ['pvc.node', 'pvchv12'],
      ['pvc.cluster.networks.storage.network', '10.254.0.128/25'],
      ['pvc.cluster.networks.storage.floating_ip', '10.254.0.254/25'],
    ),
  );
  assert.equal(config.nodeId, 12);
  assert.equal(config.system.configuration.networking?.cluster.resolved?.cidr, '10.255.0.12/24');
  assert.equal(config.system.configuration.networking?.storage.resolved?.cidr, '10.254.0.140/25');
});

test('coordinator or hypervisor, and the ZooKeeper connect string', () => {
  const coord = validateConfig(sampleDoc());
  assert.equal(coord.isCoordinator, true);
  assert.equal(coord.mode, 'coordinator');
  assert.equal(coord.zkConnectString, 'pvchv1:2181,pvchv2:2181,pvchv3:2181');
  const hv = validateConfig(mutate(['pvc.node', 'pvchv4'], ['pvc.system.fencing.ipmi.host', '10.100.0.4']));
  assert.equal(hv.isCoordinator, false);
  assert.equal(hv.mode, 'hypervisor');
  assert.equal(hv.nodeId, 4);
});

test('with networking disabled the networking sections may be left out', () => {
  const config = validateConfig(
    mutate(
      ['pvc.functions.enable_networking', false],
      ['pvc.cluster.networks', DELETE],
      ['pvc.coordinator', DELETE],
      [SYSNET, DELETE],
    ),
  );
  assert.equal(config.cluster.networks, undefined);
  assert.equal(config.coordinator, undefined);
  assert.equal(config.system.configuration.networking, undefined);
});

test('the config is deeply frozen: assignments throw', () => {
  const config = validateConfig(sampleDoc());
  assert.ok(Object.isFrozen(config));
  assert.throws(() => {
    (config as { node: string }).node = 'other';
  }, TypeError);
  assert.throws(() => {
    (config.system.fencing.intervals as { fence_intervals: number }).fence_intervals = 0;
  }, TypeError);
  assert.throws(() => {
    (config.cluster.coordinators as string[]).push('pvchv9');
  }, TypeError);
  assert.throws(() => {
    (config.system.configuration.networking?.cluster.resolved as { ip: string }).ip = '10.0.0.1';
  }, TypeError);
  assert.equal(config.node, 'pvchv1');
});

test('validation does not modify its input', () => {
  const doc = sampleDoc();
  const before = JSON.stringify(doc);
  validateConfig(doc);
  assert.equal(JSON.stringify(doc), before);
  assert.equal(Object.isFrozen(doc), false);
});

test('a document that is not a mapping is one clear problem', () => {
  for (const [raw, got] of [['hello', '"hello"'], [undefined, 'nothing'], [[1], '[1]']] as const) {
    assert.throws(
      () => validateConfig(raw),
      (err: unknown) =>
        err instanceof ConfigError && err.message === `(document): expected a mapping with the top-level key pvc, got ${got}`,
    );
  }
});

test('problems carry path and message separately; retryable is false', () => {
  try {
    validateConfig(mutate(['pvc.system.fencing.intervals.fence_intervals', 'six']));
    assert.fail('expected a ConfigError');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(err.problems, [
      { path: 'pvc.system.fencing.intervals.fence_intervals', message: 'expected an integer ≥ 0, got "six"' },
    ]);
    assert.equal(err.retryable, false);
    assert.equal(err.name, 'ConfigError');
    assert.ok(Object.isFrozen(err.problems));
  }
});
