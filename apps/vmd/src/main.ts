#!/usr/bin/env node
/**
 * Composition root of vmd: the common start-up (config, logger, local gRPC socket with health and
 * status), then connect Zookeeper, build the libvirt adapter and run the reconciler until
 * SIGTERM/SIGINT. Stopping vmd (even SIGKILL) leaves running VMs alone: they are transient
 * libvirt domains owned by libvirtd.
 */
import { PVC_VERSION, createExec, realClock } from '@pvc/runtime';
import { VMD, addRpcService, serviceMain } from '@pvc/rpc';
import { connectZk } from '@pvc/zk';
import { realConsoleFiles, virshLiveXml } from './console/index.js';
import { createIpBridges } from './host/bridges.js';
import { createLibvirtHypervisor } from './host/libvirt-hypervisor.js';
import { lateBoundVmdService } from './rpc/vmd-service.js';
import { cephdRbdLocks } from './storage/rbd-locks.js';
import { connectUntilReady, createVmd, runVmd } from './vmd.js';

/**
 * vmd leaves a silent Zookeeper server after 1 s (the library default here is 2 s): when a failed
 * host was also the server of this vmd's session, the recovery writes for this node arrive only
 * once vmd has moved to another server, and every second of that is a second of the recovered
 * guests' downtime (failover bench, issue 14 item 6). A spurious drop costs a reconnection with
 * the session and its watches kept.
 */
const VMD_ZK_READ_TIMEOUT_MS = 1_000;

const service = lateBoundVmdService();

process.exit(
  await serviceMain({
    service: 'vmd',
    version: PVC_VERSION,
    argv: process.argv.slice(2),
    env: process.env,
    register: (server) => addRpcService(server, VMD, service.api),
    run: async ({ config, logger, shutdown, zkLog }) => {
      const clock = realClock;
      const zkOpts = {
        hosts: config.cluster.coordinators, port: config.database.zookeeper.port, clock, logger: logger.child({ component: 'zk' }),
        readTimeoutMs: VMD_ZK_READ_TIMEOUT_MS,
      };
      const zk = await connectUntilReady(() => connectZk(zkOpts, { signal: shutdown.signal, timeoutMs: 15_000 }), { signal: shutdown.signal, clock, logger });
      if (!zk) return;
      zkLog.attach(zk);
      const exec = createExec(logger);
      const hv = createLibvirtHypervisor({
        uri: config.system.configuration.hypervisor.libvirt_uri, clock, logger, exec,
        scratchDir: config.system.configuration.directories.dynamic_directory,
      });
      const liveXml = virshLiveXml(exec, config.system.configuration.hypervisor.libvirt_uri);
      const rbd = config.functions.enable_storage ? cephdRbdLocks(config.system.configuration.directories.dynamic_directory) : undefined;
      const ports = { zk, hv, clock, logger, exec, console: { files: realConsoleFiles, liveXml }, bridges: createIpBridges({ exec }), ...(rbd && { rbd }) };
      const vmd = createVmd(config, ports);
      service.bind(vmd.api);
      try {
        await runVmd(config, ports, vmd.reconciler, shutdown.signal, vmd.console);
      } finally {
        await zkLog.flush();
        await zk.close();
      }
    },
  }),
);
