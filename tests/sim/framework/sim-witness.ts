import type { Clock } from '@pvc/runtime';
import type { WitnessPorts, ZkReach } from '../../../apps/keepaliled/src/ports.js';

/** What the witness network needs to know of a node. */
export interface WitnessNode {
  readonly name: string;
  readonly powered: boolean;
  /** Cluster network (a node without it reaches neither ZK nor any peer). */
  readonly network: boolean;
}

/**
 * The cluster network as the suicide peer check sees it. An ask crosses the network only when
 * both ends have it and the target is powered; otherwise nothing comes back (no RST from a pulled
 * cable or a dead host) and the caller's deadline ends it. A powered node whose keepaliled does
 * not serve (booting, suicide check off) refuses at once. A coordinator's own ZK server serves
 * while the ensemble is up (`zk up`) and the node is powered with network — a coordinator cut off
 * is in a minority. A node whose ZK traffic alone is cut (`zk-cut`) keeps its network here.
 */
export class SimWitnessNet {
  private readonly served = new Map<string, (signal: AbortSignal) => Promise<ZkReach>>();

  constructor(
    private readonly clock: Clock,
    private readonly node: (name: string) => WitnessNode | undefined,
    private readonly zkUp: () => boolean,
  ) {}

  /** The peer check's ports of one node. */
  ports(self: WitnessNode): WitnessPorts {
    return {
      peers: {
        ask: async (to, opts) => {
          const target = this.node(to);
          if (!self.network || !target?.powered || !target.network) {
            await this.clock.sleep(opts.deadlineMs, opts.signal);
            throw new Error(`no answer within ${opts.deadlineMs} ms`);
          }
          const answer = this.served.get(to);
          if (!answer) throw new Error('connection refused');
          return answer(opts.signal ?? new AbortController().signal);
        },
      },
      endpoint: {
        serve: (answer) => {
          this.served.set(self.name, answer);
          return Promise.resolve({
            address: `${self.name}:7374`,
            close: () => {
              if (this.served.get(self.name) === answer) this.served.delete(self.name);
              return Promise.resolve();
            },
          });
        },
      },
      localServer: {
        probe: () => {
          const serving = this.zkUp() && self.powered && self.network;
          return Promise.resolve(serving ? { state: 'serving', detail: 'mode follower' } : { state: 'not-serving', detail: 'not currently serving requests' });
        },
      },
    };
  }
}
