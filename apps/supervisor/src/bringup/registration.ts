import type { Config } from '@pvc/config';
import { PvcError, type Clock, type Logger } from '@pvc/runtime';
import { codec, newNodeObject, paths, SCHEMA_VERSION, type StaticData, type WritePair, type ZkClient } from '@pvc/zk';

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

/** Reads `/schema/version`; throws {@link ClusterNotInitialisedError} when it or `/nodes` is missing. */
export async function clusterSchemaVersion(zk: ZkClient): Promise<number> {
  const raw = await zk.read(paths.schema.version);
  if (raw === undefined || (await zk.exists(paths.nodes)) === undefined) {
    throw new ClusterNotInitialisedError(
      `the Zookeeper tree is not initialised (${raw === undefined ? paths.schema.version : paths.nodes} is missing): run \`pvc cluster init\` once for the cluster`,
    );
  }
  return codec.int.decode(raw, paths.schema.version);
}

function routerState(config: Config): 'secondary' | 'client' {
  return config.isCoordinator ? 'secondary' : 'client';
}

/** The keys refreshed on every start of an existing node (`setup_node`), daemon state `init`. */
export function existingNodePairs(input: RegistrationInput, activeSchemaMissing: number | undefined): WritePair[] {
  const { config } = input;
  const n = paths.node(config.node);
  const ipmi = config.system.fencing.ipmi;
  const pairs: WritePair[] = [
    [n.root, config.mode],
    [n.daemonMode, config.mode],
    [n.daemonState, 'init'],
    [n.routerState, routerState(config)],
    [n.staticData, codec.staticData.encode(input.staticData)],
    [n.pvcVersion, input.pvcVersion],
    [n.ipmiHostname, ipmi.host],
    [n.ipmiUsername, ipmi.user],
    [n.ipmiPassword, ipmi.pass],
    [n.latestSchema, codec.int.encode(SCHEMA_VERSION)],
  ];
  if (activeSchemaMissing !== undefined) pairs.push([n.activeSchema, codec.int.encode(activeSchemaMissing)]);
  return pairs;
}

/**
 * Registers this node (start-up step "the node checks if it is already present"): a new node is
 * created whole in one transaction (`newNodeObject`); an existing one gets its mode, daemon state
 * `init`, router state, static data, version and IPMI keys refreshed in one transaction. The IPMI
 * password is stored, as the original does (fencers on other coordinators need it), never logged.
 */
export async function registerNode(zk: ZkClient, input: RegistrationInput): Promise<RegistrationOutcome> {
  const { config, logger } = input;
  const schema = await clusterSchemaVersion(zk);
  const n = paths.node(config.node);
  if ((await zk.exists(n.root)) === undefined) {
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
  const active = await zk.read(n.activeSchema);
  await zk.write(existingNodePairs(input, active === undefined ? schema : undefined));
  logger.info({ node: config.node, mode: config.mode }, 'node present in Zookeeper: static data refreshed (daemon state → init)');
  return 'updated';
}

/** Writes this node's daemon state (the supervisor writes `init` at registration, `shutdown` and `stop` at exit). */
export async function writeDaemonState(zk: ZkClient, node: string, state: 'shutdown' | 'stop'): Promise<void> {
  await zk.write([[paths.node(node).daemonState, state]]);
}
