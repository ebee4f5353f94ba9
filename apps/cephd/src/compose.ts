/**
 * Builds cephd from the loaded config with the real ports (Exec for `rbd`, Zookeeper when storage is
 * enabled) and runs it until shutdown. Called by main.ts only.
 */
import type { ServiceContext } from '@pvc/rpc';
import { createExec, realClock } from '@pvc/runtime';
import { RealZkClient } from '@pvc/zk';
import { Cephd } from './cephd.js';
import { cephdPrimaryDuties } from './duties.js';
import { RBD_COMMAND_TIMEOUT_MS } from './lock-flush.js';
import { PrimaryRole } from '@pvc/rpc';

/** Zookeeper read deadline behind GetStorageStats (keepaliled calls with about 1 s). */
const ZK_READ_TIMEOUT_MS = 800;

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
  const cephd = new Cephd({
    node: config.node,
    storageEnabled,
    storageAddress,
    zk,
    exec: createExec(logger.child({ component: 'exec' })),
    logger,
    role: new PrimaryRole({ service: 'cephd', logger: logger.child({ component: 'primary-role' }), duties: cephdPrimaryDuties() }),
    rbdTimeoutMs: RBD_COMMAND_TIMEOUT_MS,
    zkTimeoutMs: ZK_READ_TIMEOUT_MS,
  });
  publish(cephd);
  try {
    await cephd.run(ctx.shutdown.signal);
  } finally {
    await ctx.zkLog.flush();
    await zk?.close();
  }
}
