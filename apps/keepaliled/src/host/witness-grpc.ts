import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger } from '@pvc/runtime';
import { rpcClient, startTcpServer, tcpTarget, WITNESS } from '@pvc/rpc';
import type { PeerCallOptions, WitnessEndpoint, WitnessPeers, ZkReach } from '../ports.js';
import { fromMessage, registerWitness } from '../witness/rpc.js';

/** Resolves a name to its addresses (`dns.lookup` with `all`: /etc/hosts, then DNS). */
export type Lookup = (name: string) => Promise<string[]>;

const systemLookup: Lookup = async (name) => (await dnsLookup(name, { all: true })).map((a) => a.address);

const isLoopback = (a: string): boolean => a.startsWith('127.') || a === '::1';

/**
 * The address the witness listens on: the one this node's name resolves to — the address other
 * nodes use to reach it (`cluster.coordinators` are names). The first non-loopback address wins;
 * a name resolving only to loopback (Debian's `127.0.1.1 <hostname>` line) is used with a warning,
 * since no other node can reach it there. Never a wildcard (`startTcpServer` refuses one).
 */
export async function witnessHost(node: string, logger: Logger, lookup: Lookup = systemLookup): Promise<string> {
  if (isIP(node) !== 0) return node;
  const addresses = await lookup(node);
  const host = addresses.find((a) => !isLoopback(a)) ?? addresses[0];
  if (host === undefined) throw new Error(`the node name ${node} resolves to no address`);
  if (isLoopback(host)) logger.warn({ node, address: host }, 'the node name resolves to a loopback address only: other nodes cannot reach the suicide peer check (fix /etc/hosts)');
  return host;
}

/** The real {@link WitnessEndpoint}: gRPC on TCP at `<address of node>:<port>`, resolved at each attempt. */
export function createGrpcWitnessEndpoint(opts: { node: string; port: number; logger: Logger; lookup?: Lookup }): WitnessEndpoint {
  return {
    async serve(answer) {
      const host = await witnessHost(opts.node, opts.logger, opts.lookup);
      const server = await startTcpServer({
        service: 'keepaliled-witness', host, port: opts.port, logger: opts.logger,
        register: (s) => registerWitness(s, answer),
      });
      return { address: server.address, close: () => server.close() };
    },
  };
}

/**
 * The real {@link WitnessPeers}: one gRPC call to `<coordinator>:<port>` with the caller's
 * deadline. A fresh channel per ask: asks are rare (only past the suicide deadline), and a reused
 * channel could sit in a long reconnect backoff from an earlier failure and miss an answer.
 * `address` maps a coordinator name to where to call it (tests: loopback addresses).
 */
export class GrpcWitnessPeers implements WitnessPeers {
  constructor(
    private readonly port: number,
    private readonly address: (coordinator: string) => string = (c) => c,
  ) {}

  async ask(coordinator: string, opts: PeerCallOptions): Promise<ZkReach> {
    const client = rpcClient(tcpTarget(this.address(coordinator), this.port), WITNESS);
    try {
      return fromMessage(await client.getZkReach({}, opts));
    } finally {
      client.close();
    }
  }
}
