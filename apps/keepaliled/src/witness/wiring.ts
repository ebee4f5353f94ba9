import type { Config } from '@pvc/config';
import type { Clock, Logger } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import { peerAskBoundMs } from '../fence/rules.js';
import type { WitnessPorts } from '../ports.js';
import { localReach } from './local-view.js';
import { PeerCheck } from './peer-check.js';
import { WitnessServer } from './serve.js';

/** The suicide peer check's parts, when it is on. */
export interface Witness {
  /** Asked by the suicide watch at its deadline. */
  check?: PeerCheck;
  /** This coordinator's witness server (coordinators only). */
  server?: WitnessServer;
}

/**
 * Builds the peer check and, on a coordinator, its witness server — only when it is on:
 * `peer_check_port` ≠ 0, `suicide_intervals` ≥ 1 (configs are assumed uniform, so a cluster
 * without suicide opens no port) and the ports are given.
 */
export function wireWitness(o: {
  config: Config; ports: WitnessPorts | undefined; zk: ZkClient; clock: Clock; logger: Logger; silentForMs: () => number; intervalMs: number;
}): Witness {
  const { config, ports, zk, clock } = o;
  const f = config.system.fencing;
  if (!ports || f.peer_check_port === 0 || f.intervals.suicide_intervals <= 0) return {};
  const logger = o.logger.child({ component: 'peer-check' });
  const local = (signal: AbortSignal) =>
    localReach({ node: config.node, sessionConnected: () => zk.state === 'connected', server: ports.localServer, silentForMs: o.silentForMs }, signal);
  const check = new PeerCheck({
    self: config.node, coordinators: config.cluster.coordinators, clock, peers: ports.peers, local, askBoundMs: peerAskBoundMs(o.intervalMs),
  });
  const server = config.isCoordinator ? new WitnessServer({ endpoint: ports.endpoint, answer: local, clock, logger }) : undefined;
  return { check, server };
}
