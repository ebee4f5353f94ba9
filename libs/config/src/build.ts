/**
 * From a schema-checked document to the frozen {@link Config}: defaults that depend on other keys,
 * derived values, and a deep freeze.
 *
 * @module
 */
import { trailingNumber } from './formats.js';
import { resolveNodeAddress } from './rules.js';
import type { ParsedDocument } from './schema.js';
import type { Config, NetworkName, NodeNetwork, NodeNetworking } from './types.js';

type ParsedPvc = ParsedDocument['pvc'];
type ParsedNodeNetwork = Omit<NodeNetwork, 'resolved'>;

/** Freezes an object graph in place, so any assignment to a config value throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function resolveNetwork(pvc: ParsedPvc, name: NetworkName, entry: ParsedNodeNetwork): NodeNetwork {
  const r = resolveNodeAddress(entry.address, pvc.cluster.networks?.[name].network, pvc.node);
  // Cross-key rules ran before building and reject every address that cannot be resolved.
  if (!r.ok) throw new Error(`internal: unresolved address for ${name} passed validation: ${r.expected}`);
  return { ...entry, resolved: r.value };
}

function buildNetworking(pvc: ParsedPvc): NodeNetworking | undefined {
  const n = pvc.system.configuration.networking;
  if (n === undefined) return undefined;
  return {
    ...n,
    upstream: resolveNetwork(pvc, 'upstream', n.upstream),
    cluster: resolveNetwork(pvc, 'cluster', n.cluster),
    storage: resolveNetwork(pvc, 'storage', n.storage),
  };
}

/** Builds the frozen config from a document that passed the schema and the cross-key rules. */
export function buildConfig(doc: ParsedDocument, source: string): Config {
  const pvc = doc.pvc;
  const { configuration } = pvc.system;
  const isCoordinator = pvc.cluster.coordinators.includes(pvc.node);
  const zkPort = pvc.database.zookeeper.port;
  const config: Config = {
    source,
    ...pvc,
    system: {
      ...pvc.system,
      configuration: {
        ...configuration,
        networking: buildNetworking(pvc),
        hypervisor: {
          ...configuration.hypervisor,
          libvirt_uri: configuration.hypervisor.libvirt_uri ?? `qemu+tcp://${pvc.node}/system`,
        },
      },
    },
    isCoordinator,
    mode: isCoordinator ? 'coordinator' : 'hypervisor',
    zkConnectString: pvc.cluster.coordinators.map((host) => `${host}:${zkPort}`).join(','),
    nodeId: trailingNumber(pvc.node) ?? null,
  };
  return deepFreeze(config);
}
