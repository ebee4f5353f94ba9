/**
 * Builds cephd from the loaded config with the real ports (Exec for the Ceph tools, Zookeeper when
 * storage is enabled) and runs it until shutdown. Called by main.ts only.
 *
 * The Ceph tools find the cluster as an administrator's would: `/etc/ceph/ceph.conf`, or
 * `CEPH_CONF` from cephd's environment (Exec passes the environment through; the tests set it).
 */
import type { ServiceContext } from '@pvc/rpc';
import { createExec, describeError, realClock, type Exec, type Logger } from '@pvc/runtime';
import type { Config } from '@pvc/config';
import { RealZkClient, type ZkClient } from '@pvc/zk';
import { Cephd } from './cephd.js';
import { cephdPrimaryDuties } from './duties.js';
import { createCephCli } from './host/ceph-cli.js';
import { createLibRados, type RadosClient } from './host/librados.js';
import { createRadosCephCli } from './host/rados-ceph-cli.js';
import { RBD_COMMAND_TIMEOUT_MS } from './lock-flush.js';
import { OwnOsds } from './own-osds.js';
import { CephStatsDuty, statsCommandTimeoutMs, statsPeriodMs } from './stats/duty.js';
import { StorageRequests } from './storage/requests.js';
import { PrimaryRole } from '@pvc/rpc';

/** Zookeeper read deadline behind GetStorageStats (keepaliled calls with about 1 s). */
const ZK_READ_TIMEOUT_MS = 800;
/** Zookeeper deadline of each read and write of the stats pass and of the OSD objects. */
const STATS_ZK_TIMEOUT_MS = 1_000;
/** Deadlines of a storage request's Ceph commands (copying or deleting a whole image: `long`) and ZK calls. */
const REQUEST_TIMEOUTS = { timeoutMs: 60_000, longTimeoutMs: 30 * 60_000, zkTimeoutMs: 10_000 };

/**
 * The storage parts that talk to Ceph and Zookeeper: the primary's stats and storage request
 * duties and this node's OSD objects.
 */
function storageParts(config: Config, zk: ZkClient, exec: Exec, rados: RadosClient | undefined, logger: Logger): { stats: CephStatsDuty; requests: StorageRequests; ownOsds: OwnOsds } {
  // The stats' `ceph` commands through librados when there is the client; everything else the tools.
  const tools = createCephCli(exec);
  const cli = rados ? createRadosCephCli(rados, tools) : tools;
  const intervalMs = statsPeriodMs(config.system.fencing.intervals.keepalive_interval * 1000);
  const commandTimeoutMs = statsCommandTimeoutMs(intervalMs);
  const common = { zk, cli, clock: realClock, node: config.node, commandTimeoutMs, zkTimeoutMs: STATS_ZK_TIMEOUT_MS };
  return {
    stats: new CephStatsDuty({ ...common, logger: logger.child({ component: 'ceph-stats' }), intervalMs }),
    ownOsds: new OwnOsds({ ...common, logger: logger.child({ component: 'own-osds' }), retryMs: intervalMs }),
    requests: new StorageRequests({ io: { zk, ceph: cli, ...REQUEST_TIMEOUTS }, node: config.node, clock: realClock, logger: logger.child({ component: 'storage-requests' }) }),
  };
}

/**
 * The librados/librbd client for lock flushes and `osd down`, or undefined for the `rbd`/`ceph`
 * tools: with `PVC_CEPH_CLIENT=cli`, or when koffi or the libraries cannot be loaded (logged).
 */
function radosClient(storageEnabled: boolean, logger: Logger): RadosClient | undefined {
  if (!storageEnabled) return undefined;
  const choice = process.env['PVC_CEPH_CLIENT'] ?? 'librados';
  if (choice === 'cli') {
    logger.info('Ceph client (lock flushes, osd down, stats): the rbd and ceph tools (PVC_CEPH_CLIENT=cli)');
    return undefined;
  }
  if (choice !== 'librados') logger.warn({ PVC_CEPH_CLIENT: choice }, 'PVC_CEPH_CLIENT is neither librados nor cli; using librados');
  try {
    const client = createLibRados();
    logger.info('Ceph client (lock flushes, osd down, stats): librados/librbd in process');
    // Warm: a first connect under load took up to ~1 s of a fence recovery.
    const started = Date.now();
    client.connect().then(
      () => logger.info({ ms: Date.now() - started }, 'Ceph client connected'),
      (err: unknown) => logger.warn({ err: describeError(err) }, 'Ceph client not connected yet; it connects at its next use'),
    );
    return client;
  } catch (err) {
    logger.warn({ err: describeError(err) }, 'librados/librbd not usable; lock flushes use the rbd and ceph tools');
    return undefined;
  }
}

/** Builds the real cephd and hands it to `publish` (the gRPC handlers), then runs it. */
export async function runCephd(ctx: ServiceContext, publish: (cephd: Cephd) => void): Promise<void> {
  const { config, logger } = ctx;
  const storageEnabled = config.functions.enable_storage;
  // With storage enabled, connect in the background and reconnect for ever; cephd serves (with the
  // last known OSD count) while Zookeeper is unreachable.
  const zk = storageEnabled
    ? new RealZkClient({
        hosts: config.cluster.coordinators,
        port: config.database.zookeeper.port,
        clock: realClock,
        logger: logger.child({ component: 'zk' }),
      })
    : undefined;
  if (zk) ctx.zkLog.attach(zk);
  else ctx.zkLog.off();
  zk?.on('connected', (e) => logger.info({ newSession: e.newSession }, 'Zookeeper connected'));
  zk?.on('suspended', () => logger.warn('Zookeeper connection lost; the OSD count stays at its last value'));
  if (!storageEnabled) logger.info('storage is not enabled on this node (functions.enable_storage): no Ceph work');
  const storageAddress = config.system.configuration.networking?.storage.resolved?.ip;
  if (storageEnabled && storageAddress === undefined) {
    logger.warn('this node has no storage address (system.configuration.networking.storage): no RBD lock counts as its own, so a start refuses any locked image');
  }
  const exec = createExec(logger.child({ component: 'exec' }));
  const rados = radosClient(storageEnabled, logger);
  const storage = zk ? storageParts(config, zk, exec, rados, logger) : undefined;
  const cephd = new Cephd({
    node: config.node,
    storageEnabled,
    storageAddress,
    zk,
    exec,
    rados,
    logger,
    role: new PrimaryRole({ service: 'cephd', logger: logger.child({ component: 'primary-role' }), duties: cephdPrimaryDuties({ stats: storage?.stats, requests: storage?.requests }) }),
    rbdTimeoutMs: RBD_COMMAND_TIMEOUT_MS,
    zkTimeoutMs: ZK_READ_TIMEOUT_MS,
  });
  publish(cephd);
  try {
    await Promise.all([cephd.run(ctx.shutdown.signal), storage?.ownOsds.run(ctx.shutdown.signal)]);
  } finally {
    rados?.close();
    await ctx.zkLog.flush();
    await zk?.close();
  }
}
