import type * as grpc from '@grpc/grpc-js';
import { addRpcService, WITNESS, type ZkReachMessage } from '@pvc/rpc';
import type { ZkReach, ZkServerState } from '../ports.js';

const STATES: readonly ZkServerState[] = ['serving', 'not-serving', 'unknown'];

/** A {@link ZkReach} as the wire message. */
export function toMessage(r: ZkReach): ZkReachMessage {
  return { node: r.node, sessionConnected: r.sessionConnected, serverState: r.server, serverDetail: r.serverDetail, msSinceKeepalive: r.msSinceKeepalive };
}

/** A wire message as a {@link ZkReach}; a server state we do not know reads as `unknown` (never confirms). */
export function fromMessage(m: ZkReachMessage): ZkReach {
  const server = STATES.find((s) => s === m.serverState) ?? 'unknown';
  const detail = server === m.serverState ? m.serverDetail : `unknown server state ${JSON.stringify(m.serverState)}`;
  return { node: m.node, sessionConnected: m.sessionConnected, server, serverDetail: detail, msSinceKeepalive: Number(m.msSinceKeepalive) };
}

/** Serves pvc.keepaliled.v1.WitnessService: each call computes the answer afresh (bounded by the caller's deadline). */
export function registerWitness(server: grpc.Server, answer: (signal: AbortSignal) => Promise<ZkReach>): void {
  addRpcService(server, WITNESS, {
    getZkReach: async (_req, ctx) => toMessage(await answer(ctx.signal)),
  });
}
