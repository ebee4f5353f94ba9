import type { ServiceContext } from '@pvc/rpc';
import { createExec, describeError, PVC_VERSION, realClock } from '@pvc/runtime';
import { KEEPALIVED_SESSION_TIMEOUT_MS, RealZkClient } from '@pvc/zk';
import { createIpmitoolIpmi } from '@pvc/ipmi';
import { GrpcPeers } from './host/peers-grpc.js';
import { procHostStats } from './host/host-stats.js';
import { createSelfReset } from './host/self-reset.js';
import { createGrpcWitnessEndpoint, GrpcWitnessPeers } from './host/witness-grpc.js';
import { srvrProbe } from './host/zk-srvr.js';
import type { WitnessPorts } from './ports.js';
import { Keepalived } from './service.js';
import { createHealthMonitor } from './health/index.js';
import { startMetricsServer, type MetricsServer } from './metrics/server.js';
import { readMetricsInput } from './metrics/source.js';


/**
 * Builds the real ports and runs keepaliled until shutdown. `onReady` receives the service so the
 * gRPC handlers can report its state.
 */
export async function runKeepalived(ctx: ServiceContext, onReady: (k: Keepalived) => void): Promise<void> {
  const { config, logger, shutdown } = ctx;
  const exec = createExec(logger);
  const zk = new RealZkClient({
    hosts: config.cluster.coordinators, port: config.database.zookeeper.port, clock: realClock, logger,
    sessionTimeoutMs: KEEPALIVED_SESSION_TIMEOUT_MS, opTimeoutMs: 5_000, localExpiry: true,
  });
  ctx.zkLog.attach(zk);
  const peers = new GrpcPeers(config.system.configuration.directories.dynamic_directory);
  let metrics: MetricsServer | undefined;
  try {
    await zk.waitConnected({ signal: shutdown.signal, timeoutMs: Infinity });
    const { listen_address: host, port } = config.system.metrics;
    if (port !== 0) {
      const mlog = logger.child({ component: 'metrics' });
      metrics = await startMetricsServer({
        host, port, logger: mlog,
        read: () => readMetricsInput({ zk, node: config.node, version: PVC_VERSION, logger: mlog, timeoutMs: 5_000 }),
      });
    }
    // Plugins run only after the first keepalive, so the service below is known by then.
    const built: { service?: Keepalived } = {};
    const health = createHealthMonitor({
      node: config.node, isCoordinator: config.isCoordinator, config, zk, clock: realClock, exec,
      logger: logger.child({ component: 'health' }),
      pluginDirectory: config.system.configuration.directories.plugin_directory,
      intervalMs: config.system.configuration.monitoring_interval * 1000,
      services: () => built.service?.figures.peers() ?? [],
    });
    const peerPort = config.system.fencing.peer_check_port;
    const witness: WitnessPorts = {
      peers: new GrpcWitnessPeers(peerPort),
      endpoint: createGrpcWitnessEndpoint({ node: config.node, port: peerPort, logger: logger.child({ component: 'peer-check' }) }),
      localServer: srvrProbe({ host: config.node, port: config.database.zookeeper.port }),
    };
    const service = new Keepalived({
      config, zk, clock: realClock, logger, peers, host: procHostStats, health, witness,
      ipmi: createIpmitoolIpmi(exec), zkSessionTimeoutMs: KEEPALIVED_SESSION_TIMEOUT_MS, shutdown: shutdown.signal, reset: createSelfReset({ exec, logger, command: config.system.fencing.suicide_command }),
    });
    built.service = service;
    onReady(service);
    await service.run(shutdown.signal);
  } catch (err) {
    if (!shutdown.signal.aborted) throw err;
    logger.debug({ err: describeError(err) }, 'stopped while starting');
  } finally {
    await metrics?.close();
    peers.close();
    await ctx.zkLog.flush();
    await zk.close();
  }
}
