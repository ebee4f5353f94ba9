import { describeError, PvcError, type Logger } from '@pvc/runtime';
import type { NodeResources, RpcHandlers, VmdApi } from '@pvc/rpc';
import type { Hypervisor } from '../host/hypervisor.js';

/** What the gRPC handlers call. */
export interface VmdServiceDeps {
  hv: Hypervisor;
  logger: Logger;
  /** The reconciler's cached figures. */
  resources(): NodeResources;
  /** Stops the reconciler from starting anything again. */
  halt(reason: string): void;
}

/**
 * pvc.vmd.v1.VmdService. `getResources` answers from the reconciler's cache (no libvirt call), so
 * it is fast enough for keepaliled's ~1 s deadline. `stopAll` destroys every active domain at once
 * (all in parallel) and reports per domain; afterwards this vmd starts nothing until restarted.
 */
export function createVmdService(deps: VmdServiceDeps): VmdApi {
  return {
    getResources: () => Promise.resolve(deps.resources()),
    stopAll: async ({ reason }) => {
      deps.halt(reason || 'stopAll');
      deps.logger.warn({ reason }, 'stopping every VM on this node');
      const active = (await deps.hv.list()).filter((d) => d.active);
      const results = await Promise.allSettled(active.map((d) => deps.hv.destroy(d.uuid)));
      const stopped: string[] = [];
      const failed: string[] = [];
      results.forEach((r, i) => {
        const uuid = active[i]?.uuid ?? '?';
        if (r.status === 'fulfilled') stopped.push(uuid);
        else failed.push(`${uuid}: ${describeError(r.reason)}`);
      });
      deps.logger.warn({ stopped: stopped.length, failed }, 'stopAll finished');
      return { stopped, failed };
    },
  };
}

/**
 * The gRPC handlers must be registered before the socket opens, but the reconciler exists only
 * after ZK is connected: this forwards to the real service (with the call's context) once it is
 * bound, and answers a retryable NOT_READY (gRPC UNAVAILABLE) before that.
 */
export function lateBoundVmdService(): { api: RpcHandlers<VmdApi>; bind(impl: RpcHandlers<VmdApi>): void } {
  let impl: RpcHandlers<VmdApi> | undefined;
  const need = (): RpcHandlers<VmdApi> => {
    if (!impl) throw new PvcError('NOT_READY', 'vmd is starting (not connected to Zookeeper and libvirt yet)', { retryable: true });
    return impl;
  };
  return {
    api: {
      getResources: async (req, ctx) => need().getResources(req, ctx),
      stopAll: async (req, ctx) => need().stopAll(req, ctx),
    },
    bind: (i) => void (impl = i),
  };
}
