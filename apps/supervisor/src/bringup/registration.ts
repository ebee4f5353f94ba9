import type { Config } from '@pvc/config';
import { PvcError, type Clock, type Logger } from '@pvc/runtime';
import {
  clusterKeys, codec, newNodeObject, nodeKeys, pair, paths, readKeyIfExists, SCHEMA_VERSION, type StaticData, type WritePair, type ZkClient,
} from '@pvc/zk';

/** The cluster tree is not initialised (`pvc cluster init` has not run): code `CLUSTER_NOT_INITIALISED`. */
export class ClusterNotInitialisedError extends PvcError {
  constructor(message: string) {
    super('CLUSTER_NOT_INITIALISED', message, { retryable: true });
  }
}

/** What registration needs besides the config. */
export interface RegistrationInput {
  readonly config: Config;
  readonly staticData: StaticData;
  readonly pvcVersion: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Whether the node was created or updated. */
export type RegistrationOutcome = 'created' | 'updated';

/**
 * Reads `/schema/version`; throws {@link ClusterNotInitialisedError} when it or `/nodes` is
 * missing, or when it holds no schema version (the bad value is logged with the key).
 */
export async function clusterSchemaVersion(zk: ZkClient): Promise<number> {
  const version = await readKeyIfExists(zk, clusterKeys.schemaVersion);
  if (version === undefined || (await zk.exists(paths.nodes)) === undefined) {
    throw new ClusterNotInitialisedError(
      `the Zookeeper tree is not initialised (${version === undefined ? paths.schema.version : paths.nodes} is missing): run \`pvc cluster init\` once for the cluster`,
    );
  }
  if (version < 1) {
    throw new ClusterNotInitialisedError(`${paths.schema.version} holds no schema version: run \`pvc cluster init\` once for the cluster`);
  }
  return version;
}

function routerState(config: Config): 'secondary' | 'client' {
  return config.isCoordinator ? 'secondary' : 'client';
}

/** The keys refreshed on every start of an existing node (`setup_node`), daemon state `init`. */
export function existingNodePairs(input: RegistrationInput, activeSchemaMissing: number | undefined): WritePair[] {
  const { config } = input;
  const k = nodeKeys(config.node);
  const ipmi = config.system.fencing.ipmi;
  const pairs: WritePair[] = [
    pair(k.root, config.mode),
    pair(k.daemonMode, config.mode),
    pair(k.daemonState, 'init'),
    pair(k.routerState, routerState(config)),
    pair(k.staticData, input.staticData),
    pair(k.pvcVersion, input.pvcVersion),
    pair(k.ipmiHostname, ipmi.host),
    pair(k.ipmiUsername, ipmi.user),
    pair(k.ipmiPassword, ipmi.pass),
    pair(k.latestSchema, SCHEMA_VERSION),
  ];
  if (activeSchemaMissing !== undefined) pairs.push(pair(k.activeSchema, activeSchemaMissing));
  return pairs;
}

/**
 * Registers this node (start-up step "the node checks if it is already present"): a new node is
 * created whole in one transaction (`newNodeObject`); an existing one gets its mode, daemon state
 * `init`, router state, static data, version and IPMI keys refreshed in one transaction, and its
 * `activeschema` set to the cluster's `schema` when it holds none (absent, or empty as the schema
 * fill creates it: the original's `int()` of it fails and it copies `/schema/version`). The IPMI
 * password is stored, as the original does (fencers on other coordinators need it), never logged.
 */
export async function registerNode(zk: ZkClient, input: RegistrationInput, schema: number): Promise<RegistrationOutcome> {
  const { config, logger } = input;
  const k = nodeKeys(config.node);
  if ((await zk.exists(k.root.path)) === undefined) {
    const ipmi = config.system.fencing.ipmi;
    const obj = newNodeObject({
      name: config.node,
      daemonMode: config.mode,
      nowMs: input.clock.now(),
      staticData: codec.staticData.encode(input.staticData),
      pvcVersion: input.pvcVersion,
      ipmi: { hostname: ipmi.host, username: ipmi.user, password: ipmi.pass },
      activeSchema: schema,
      latestSchema: SCHEMA_VERSION,
    });
    await zk.createObject(obj.root, obj.entries);
    logger.info({ node: config.node, mode: config.mode, keys: obj.entries.length }, 'node absent in Zookeeper: added (daemon state stop → init)');
    return 'created';
  }
  const active = await readKeyIfExists(zk, k.activeSchema, { logger });
  await zk.write(existingNodePairs(input, active === undefined || active < 1 ? schema : undefined));
  logger.info({ node: config.node, mode: config.mode }, 'node present in Zookeeper: static data refreshed (daemon state → init)');
  return 'updated';
}

/** Writes this node's daemon state (the supervisor writes `init` at registration, `shutdown` and `stop` at exit). */
export async function writeDaemonState(zk: ZkClient, node: string, state: 'shutdown' | 'stop'): Promise<void> {
  await zk.write([pair(nodeKeys(node).daemonState, state)]);
}
