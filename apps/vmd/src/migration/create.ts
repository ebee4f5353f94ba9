import type { Config } from '@pvc/config';
import type { Clock, Logger } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import type { Hypervisor } from '../host/hypervisor.js';
import { peerAddress, type LiveMigrator } from '../host/virsh-migrate.js';
import { DEFAULT_TIMINGS } from './deps.js';
import { MigrationTracker } from './tracker.js';

/** The migration job runner of a vmd, from its config and ports (`migrator`: virsh, or the simulator's). */
export function createMigrations(config: Config, ports: { zk: ZkClient; hv: Hypervisor; clock: Clock; logger: Logger; migrator: LiveMigrator }): MigrationTracker {
  const hyp = config.system.configuration.hypervisor;
  return new MigrationTracker({
    zk: ports.zk, hv: ports.hv, clock: ports.clock, logger: ports.logger.child({ component: 'migration' }), node: config.node,
    migrator: ports.migrator,
    peer: (target) => peerAddress(hyp.libvirt_uri, config.node, target),
    shutdownTimeoutMs: hyp.vm_shutdown_timeout * 1000,
    timings: DEFAULT_TIMINGS,
  });
}
