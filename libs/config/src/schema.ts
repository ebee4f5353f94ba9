/**
 * The zod schema of `pvcnoded.yaml`, per key. Every node's message is one of our "expected ..."
 * phrases (see `checks.ts`), turned into problem lines by `problems.ts`. Rules that span several
 * keys (`depends`, by-id addressing, addresses inside networks) live in `rules.ts`.
 *
 * Every mapping is strict: an unknown key is a problem, because a misspelt key that is silently
 * ignored leaves its setting at a default the operator did not choose.
 *
 * @module
 */
import { z } from 'zod';
import * as c from './checks.js';
import type { Check } from './checks.js';

/** A schema node for a single value, validated and normalised by a {@link Check}. */
function leaf<T>(check: Check<T>) {
  return z.unknown().transform((raw, ctx): T => {
    const result = check(raw);
    if (result.ok) return result.value;
    ctx.issues.push({ code: 'custom', message: result.expected, input: raw });
    return z.NEVER;
  });
}

/** A strict mapping whose wrong-type message is ours. */
function section<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape, { error: (iss) => (iss.code === 'invalid_type' ? 'a mapping' : undefined) });
}

const database = section({
  database: section({
    host: leaf(c.hostOrIp),
    port: leaf(c.port),
    name: leaf(c.nonEmptyString),
    user: leaf(c.nonEmptyString),
    pass: leaf(c.nonEmptyString),
  }),
});

const clusterNetwork = section({
  domain: leaf(c.domainOrNone),
  network: leaf(c.ipv4Network),
  floating_ip: leaf(c.ipv4WithPrefix),
  gateway: leaf(c.ipv4).optional(),
});

const nodeNetwork = section({
  device: leaf(c.deviceName),
  mtu: leaf(c.mtu),
  address: leaf(c.addressSpec),
});

const sriovDevice = section({
  phy: leaf(c.deviceName),
  mtu: leaf(c.mtu).optional(),
  vfcount: leaf(c.integer(0)).optional(),
});

const networking = section({
  bridge_device: leaf(c.deviceName).optional(),
  bridge_mtu: leaf(c.mtu).optional(),
  sriov_enable: leaf(c.boolean).default(false),
  sriov_device: z.array(sriovDevice, { error: 'a list of SR-IOV devices' }).default([]),
  upstream: nodeNetwork,
  cluster: nodeNetwork,
  storage: nodeNetwork,
});

const configuration = section({
  directories: section({
    plugin_directory: leaf(c.absolutePath).default('/usr/share/pvc/plugins'),
    dynamic_directory: leaf(c.absolutePath),
    log_directory: leaf(c.absolutePath),
    console_log_directory: leaf(c.absolutePath),
  }),
  logging: section({
    file_logging: leaf(c.boolean),
    stdout_logging: leaf(c.boolean),
    log_colours: leaf(c.boolean),
    log_dates: leaf(c.boolean),
    log_keepalives: leaf(c.boolean),
    log_keepalive_cluster_details: leaf(c.boolean),
    log_keepalive_plugin_details: leaf(c.boolean).default(true),
    log_keepalive_storage_details: leaf(c.boolean).default(true),
    console_log_lines: leaf(c.integer(0)),
    zookeeper_logging: leaf(c.boolean).default(true),
    node_log_lines: leaf(c.integer(0)).default(2000),
  }),
  networking: networking.optional(),
  hypervisor: section({
    domain_type: leaf(c.domainType).default('kvm'),
    libvirt_uri: leaf(c.libvirtUri).optional(),
    vm_shutdown_timeout: leaf(c.integer(1)).default(180),
  }).prefault({}),
  monitoring_interval: leaf(c.integer(1)).default(15),
});

const fencing = section({
  intervals: section({
    keepalive_interval: leaf(c.integer(1)),
    fence_intervals: leaf(c.integer(0)),
    suicide_intervals: leaf(c.integer(0)).default(0),
  }),
  actions: section({
    successful_fence: leaf(c.fenceAction),
    failed_fence: leaf(c.fenceAction),
  }),
  ipmi: section({
    host: leaf(c.hostOrIp),
    user: leaf(c.nonEmptyString),
    pass: leaf(c.nonEmptyString),
    port: leaf(c.port).default(623),
  }),
  suicide_command: leaf(c.nonEmptyString).optional(),
  peer_check_port: leaf(c.integer(0, 65535, 'a port number from 1 to 65535, or 0 (off)')).default(7374),
});

const metrics = section({
  listen_address: leaf(c.ipv4).default('127.0.0.1'),
  port: leaf(c.integer(0, 65535, 'a port number from 1 to 65535, or 0 (off)')).default(0),
});

const pvc = section({
  node: leaf(c.shortHostname),
  debug: leaf(c.boolean),
  functions: section({
    enable_hypervisor: leaf(c.boolean),
    enable_networking: leaf(c.boolean),
    enable_storage: leaf(c.boolean),
    enable_api: leaf(c.boolean).default(false),
  }),
  cluster: section({
    coordinators: z
      .array(leaf(c.shortHostname), { error: 'a non-empty list of short hostnames' })
      .min(1, { error: 'a non-empty list of short hostnames' }),
    networks: section({ upstream: clusterNetwork, cluster: clusterNetwork, storage: clusterNetwork }).optional(),
  }),
  coordinator: section({ dns: database, metadata: database }).optional(),
  database: section({
    zookeeper: section({ port: leaf(c.port).default(2181) }).prefault({}),
  }).prefault({}),
  system: section({
    fencing,
    migration: section({ target_selector: leaf(c.targetSelector) }),
    configuration,
    metrics: metrics.prefault({}),
  }),
});

/** The whole document: a mapping with the single key `pvc`. */
export const documentSchema = z.strictObject(
  { pvc },
  { error: (iss) => (iss.code === 'invalid_type' ? 'a mapping with the top-level key pvc' : undefined) },
);

/** What {@link documentSchema} produces: checked and defaulted, before derived values are added. */
export type ParsedDocument = z.output<typeof documentSchema>;
