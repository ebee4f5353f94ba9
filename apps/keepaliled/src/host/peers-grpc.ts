import { CEPHD, NETD, PRIMARY_ROLE, rpcClient, socketPath, unixTarget, VMD, type ApiOf, type RpcClient, type RpcServiceDef, type ServiceName } from '@pvc/rpc';
import type { PeerCallOptions, Peers } from '../ports.js';

/**
 * The real {@link Peers}: typed gRPC clients on the node's unix sockets. Clients are created once
 * and reused (grpc-js reconnects by itself when a peer restarts).
 */
export class GrpcPeers implements Peers {
  private readonly clients: { close(): void }[] = [];
  private readonly vmd;
  private readonly netd;
  private readonly cephd;
  private readonly netdRole;
  private readonly cephdRole;

  constructor(dynamicDirectory: string) {
    const open = <S extends RpcServiceDef>(svc: ServiceName, def: S): RpcClient<ApiOf<S>> => {
      const c = rpcClient(unixTarget(socketPath(dynamicDirectory, svc)), def);
      this.clients.push(c);
      return c;
    };
    this.vmd = open('vmd', VMD);
    this.netd = open('netd', NETD);
    this.cephd = open('cephd', CEPHD);
    this.netdRole = open('netd', PRIMARY_ROLE);
    this.cephdRole = open('cephd', PRIMARY_ROLE);
  }

  resources(opts: PeerCallOptions) {
    return this.vmd.getResources({}, opts);
  }

  networkStats(opts: PeerCallOptions) {
    return this.netd.getNetworkStats({}, opts);
  }

  storageStats(opts: PeerCallOptions) {
    return this.cephd.getStorageStats({}, opts);
  }

  stopAllVms(reason: string, opts: PeerCallOptions) {
    return this.vmd.stopAll({ reason }, opts);
  }

  /**
   * Both services must confirm. On: netd, then cephd (a failure stops there; the takeover is retried). Off: both are asked
   * even when netd fails (a duty of cephd must not stay on because netd is down); the first
   * failure is then thrown, naming its service.
   */
  async setPrimaryDuties(on: boolean, reason: string, opts: PeerCallOptions): Promise<void> {
    if (on) {
      await this.netdRole.setPrimary({ primary: on, reason }, opts);
      await this.cephdRole.setPrimary({ primary: on, reason }, opts);
      return;
    }
    const netd = await this.netdRole.setPrimary({ primary: false, reason }, opts).then(() => undefined, (err: unknown) => ({ err }));
    await this.cephdRole.setPrimary({ primary: false, reason }, opts);
    if (netd) throw netd.err;
  }

  /**
   * FORCE mode: every lock goes, and cephd marks `deadNode`'s OSDs down meanwhile. Called by fence
   * recovery only, after the dead node was confirmed off (or must have reset itself).
   */
  flushRbdLocks(images: readonly string[], deadNode: string, opts: PeerCallOptions) {
    return this.cephd.flushLocks({ images: [...images], mode: 'FLUSH_MODE_FORCE', deadNode }, opts);
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}
