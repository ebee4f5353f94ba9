import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from './errors.js';
import { DELETE, mutate, type Edit } from './testing/sample.js';
import { validateConfig } from './validate.js';

const NET = 'pvc.cluster.networks';
const SYSNET = 'pvc.system.configuration.networking';
const FENCE = 'pvc.system.fencing';
const DIRS = 'pvc.system.configuration.directories';
const HV = 'pvc.system.configuration.hypervisor';

/** Each row: a name, the edits applied to the sample, and the exact problem lines expected. */
const TABLE: ReadonlyArray<readonly [string, readonly Edit[], readonly string[]]> = [
  ['node missing', [['pvc.node', DELETE]], ['pvc.node: expected a non-empty string, got nothing']],
  [
    'node fully qualified',
    [['pvc.node', 'pvchv1.example.com']],
    ['pvc.node: expected a short hostname (letters, digits and hyphens, no dots), got "pvchv1.example.com"'],
  ],
  ['debug not a boolean', [['pvc.debug', 'maybe']], ['pvc.debug: expected true or false, got "maybe"']],
  [
    'function flag as a number',
    [['pvc.functions.enable_hypervisor', 1]],
    ['pvc.functions.enable_hypervisor: expected true or false, got 1'],
  ],
  ['functions section missing', [['pvc.functions', DELETE]], ['pvc.functions: expected a mapping, got nothing']],
  [
    'coordinators empty',
    [['pvc.cluster.coordinators', []]],
    ['pvc.cluster.coordinators: expected a non-empty list of short hostnames, got []'],
  ],
  [
    'coordinators a single string',
    [['pvc.cluster.coordinators', 'pvchv1']],
    ['pvc.cluster.coordinators: expected a non-empty list of short hostnames, got "pvchv1"'],
  ],
  [
    'coordinators with a dotted name and a duplicate',
    [['pvc.cluster.coordinators', ['pvchv1', 'pvchv2.lan', 'pvchv1']]],
    [
      'pvc.cluster.coordinators[1]: expected a short hostname (letters, digits and hyphens, no dots), got "pvchv2.lan"',
      'pvc.cluster.coordinators[2]: expected a coordinator not already listed, got "pvchv1"',
    ],
  ],
  [
    'network with host bits set',
    [[`${NET}.cluster.network`, '10.255.0.5/24']],
    [`${NET}.cluster.network: expected a network address with no host bits set (10.255.0.0/24), got "10.255.0.5/24"`],
  ],
  [
    'network without prefix',
    [[`${NET}.storage.network`, '10.254.0.0']],
    [`${NET}.storage.network: expected an IPv4 network in CIDR form, such as 10.0.0.0/24, got "10.254.0.0"`],
  ],
  [
    'floating IP without prefix',
    [[`${NET}.cluster.floating_ip`, '10.255.0.254']],
    [`${NET}.cluster.floating_ip: expected an IPv4 address with a prefix length, such as 10.0.0.254/24, got "10.255.0.254"`],
  ],
  [
    'floating IP outside its network',
    [[`${NET}.upstream.floating_ip`, '1.1.2.10/24']],
    [`${NET}.upstream.floating_ip: expected a host address of 1.1.1.0/24, got "1.1.2.10/24"`],
  ],
  [
    'two networks with the same floating IP (cluster and storage share a subnet)',
    [[`${NET}.storage.network`, '10.255.0.0/24'], [`${NET}.storage.floating_ip`, '10.255.0.254/24']],
    [`${NET}.storage.floating_ip: expected an address other than the floating_ip of the cluster network (10.255.0.254), got "10.255.0.254/24"`],
  ],
  [
    'gateway not an address',
    [[`${NET}.upstream.gateway`, '1.1.1.256']],
    [`${NET}.upstream.gateway: expected an IPv4 address such as 10.0.0.1, got "1.1.1.256"`],
  ],
  [
    'domain with a space',
    [[`${NET}.cluster.domain`, 'pvc local']],
    [`${NET}.cluster.domain: expected a domain name or None, got "pvc local"`],
  ],
  ['storage network missing', [[`${NET}.storage`, DELETE]], [`${NET}.storage: expected a mapping, got nothing`]],
  [
    'database port out of range',
    [['pvc.coordinator.dns.database.port', 70000]],
    ['pvc.coordinator.dns.database.port: expected a port number from 1 to 65535, got 70000'],
  ],
  [
    'database password missing',
    [['pvc.coordinator.metadata.database.pass', DELETE]],
    ['pvc.coordinator.metadata.database.pass: expected a non-empty string, got nothing'],
  ],
  [
    'IPMI password of the wrong type is not echoed',
    [[`${FENCE}.ipmi.pass`, 123456]],
    [`${FENCE}.ipmi.pass: expected a non-empty string, got a number (redacted)`],
  ],
  [
    'fence_intervals a word',
    [[`${FENCE}.intervals.fence_intervals`, 'six']],
    [`${FENCE}.intervals.fence_intervals: expected an integer ≥ 0, got "six"`],
  ],
  [
    'keepalive_interval zero',
    [[`${FENCE}.intervals.keepalive_interval`, 0]],
    [`${FENCE}.intervals.keepalive_interval: expected an integer ≥ 1, got 0`],
  ],
  [
    'unknown fence action',
    [[`${FENCE}.actions.successful_fence`, 'reboot']],
    [`${FENCE}.actions.successful_fence: expected one of migrate, None, got "reboot"`],
  ],
  [
    'failed_fence migrate without suicide_intervals',
    [[`${FENCE}.actions.failed_fence`, 'migrate']],
    [`${FENCE}.intervals.suicide_intervals: expected an integer ≥ 1 when ${FENCE}.actions.failed_fence is migrate, got 0`],
  ],
  [
    'unknown target selector',
    [['pvc.system.migration.target_selector', 'fastest']],
    ['pvc.system.migration.target_selector: expected one of mem, memprov, vcpus, load, vms, got "fastest"'],
  ],
  [
    'relative directory',
    [[`${DIRS}.plugin_directory`, 'plugins']],
    [`${DIRS}.plugin_directory: expected an absolute path, got "plugins"`],
  ],
  [
    'negative console_log_lines',
    [['pvc.system.configuration.logging.console_log_lines', -1]],
    ['pvc.system.configuration.logging.console_log_lines: expected an integer ≥ 0, got -1'],
  ],
  [
    'negative node_log_lines, zookeeper_logging not a boolean',
    [
      ['pvc.system.configuration.logging.node_log_lines', -5],
      ['pvc.system.configuration.logging.zookeeper_logging', 'sometimes'],
    ],
    [
      'pvc.system.configuration.logging.zookeeper_logging: expected true or false, got "sometimes"',
      'pvc.system.configuration.logging.node_log_lines: expected an integer ≥ 0, got -5',
    ],
  ],
  ['bridge MTU too small', [[`${SYSNET}.bridge_mtu`, 20]], [`${SYSNET}.bridge_mtu: expected an MTU from 68 to 65535, got 20`]],
  [
    'SR-IOV list not a list',
    [[`${SYSNET}.sriov_device`, 'ens1f0']],
    [`${SYSNET}.sriov_device: expected a list of SR-IOV devices, got "ens1f0"`],
  ],
  [
    'SR-IOV entry without phy, with a bad mtu and a stray key',
    [[`${SYSNET}.sriov_device`, [{ mtu: 'jumbo', vfcount: 7, pf: 'ens1f0' }]]],
    [
      `${SYSNET}.sriov_device[0].phy: expected a non-empty string, got nothing`,
      `${SYSNET}.sriov_device[0].mtu: expected an MTU from 68 to 65535, got "jumbo"`,
      `${SYSNET}.sriov_device[0].pf: unknown key`,
    ],
  ],
  [
    'address dhcp',
    [[`${SYSNET}.cluster.address`, 'dhcp']],
    [`${SYSNET}.cluster.address: expected None, by-id or an IPv4 address with a prefix length, such as 10.0.0.1/24, got "dhcp"`],
  ],
  [
    'static address outside its network',
    [[`${SYSNET}.upstream.address`, '1.1.2.5/24']],
    [`${SYSNET}.upstream.address: expected a host address of 1.1.1.0/24, got "1.1.2.5/24"`],
  ],
  [
    'by-id with a node name without digits',
    [['pvc.node', 'hvnode']],
    [
      `${SYSNET}.cluster.address: expected None or a static address (by-id needs pvc.node to end in digits; "hvnode" does not), got "by-id"`,
      `${SYSNET}.storage.address: expected None or a static address (by-id needs pvc.node to end in digits; "hvnode" does not), got "by-id"`,
    ],
  ],
  [
    'by-id beyond the network',
    [['pvc.node', 'pvchv300'], [`${SYSNET}.storage.address`, '10.254.0.9/24']],
    [`${SYSNET}.cluster.address: expected a node number from 1 to 254 for by-id in 10.255.0.0/24 (pvc.node "pvchv300" gives 300), got "by-id"`],
  ],
  [
    'unknown keys, with hints for a misspelling and the prose layout',
    [[`${FENCE}.frobnicate`, true], [`${FENCE}.intervals.fence_interval`, 6], ['pvc.system.intervals', {}]],
    [
      `${FENCE}.intervals.fence_interval: unknown key (did you mean fence_intervals?)`,
      `${FENCE}.frobnicate: unknown key`,
      `pvc.system.intervals: unknown key (did you mean ${FENCE}.intervals?)`,
    ],
  ],
  [
    'networking enabled without any networking sections',
    [[NET, DELETE], ['pvc.coordinator', DELETE], [SYSNET, DELETE]],
    [
      `${NET}: expected a mapping (required when pvc.functions.enable_networking is true), got nothing`,
      'pvc.coordinator: expected a mapping (required when pvc.functions.enable_networking is true), got nothing',
      `${SYSNET}: expected a mapping (required when pvc.functions.enable_networking is true), got nothing`,
    ],
  ],
  [
    'our additions out of range',
    [
      [`${HV}.domain_type`, 'xen'],
      [`${HV}.libvirt_uri`, 'pvchv1'],
      [`${HV}.vm_shutdown_timeout`, 0],
      ['pvc.database.zookeeper.port', 0],
      [`${FENCE}.ipmi.port`, 'ipmi'],
    ],
    [
      'pvc.database.zookeeper.port: expected a port number from 1 to 65535, got 0',
      `${FENCE}.ipmi.port: expected a port number from 1 to 65535, got "ipmi"`,
      `${HV}.domain_type: expected one of kvm, qemu, got "xen"`,
      `${HV}.libvirt_uri: expected a libvirt URI such as qemu+tcp://host/system, got "pvchv1"`,
      `${HV}.vm_shutdown_timeout: expected an integer ≥ 1, got 0`,
    ],
  ],
  [
    'problems in unrelated sections all at once',
    [['pvc.node', DELETE], [`${FENCE}.ipmi.user`, ''], ['pvc.system.migration.target_selector', 'MEM'], ['pvc.debug', 'Yes']],
    [
      'pvc.node: expected a non-empty string, got nothing',
      'pvc.debug: expected true or false, got "Yes"',
      `${FENCE}.ipmi.user: expected a non-empty string, got ""`,
      'pvc.system.migration.target_selector: expected one of mem, memprov, vcpus, load, vms, got "MEM"',
    ],
  ],
  ['system not a mapping', [['pvc.system', 5]], ['pvc.system: expected a mapping, got 5']],
  ['misspelt root key', [['pvcd', {}]], ['pvcd: unknown key (did you mean pvc?)']],
  [
    'a mapping shown in a message never shows a password',
    [['pvc.coordinator.dns', [{ database: { pass: 'hunter2' } }]]],
    ['pvc.coordinator.dns: expected a mapping, got [{"database":{"pass":"[redacted]"}}]'],
  ],
  [
    'YAML null for a required string',
    [[`${FENCE}.ipmi.host`, null]],
    [`${FENCE}.ipmi.host: expected a non-empty string, got null`],
  ],
];

test(`malformed-config table has at least 30 rows (${TABLE.length})`, () => {
  assert.ok(TABLE.length >= 30);
});

for (const [name, edits, lines] of TABLE) {
  test(`malformed: ${name}`, () => {
    const doc = mutate(...edits);
    assert.throws(
      () => validateConfig(doc, 'table'),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.deepEqual(err.message.split('\n'), lines);
        assert.deepEqual(err.problems.map((p) => `${p.path}: ${p.message}`), lines);
        return true;
      },
    );
  });
}
