import type { VmdApi } from '@pvc/rpc';
import type { Peers } from '../../apps/keepaliled/src/ports.js';

/**
 * keepaliled's peers for a node whose vmd runs in the same process (the simulator, the ensemble
 * bench): resources and stopAll go to that vmd (`vmd` throws while it is not running), networks
 * and storage report nothing, RBD lock flushes succeed, and the primary duties are whatever
 * `setPrimaryDuties` does (default: nothing).
 */
export function inProcessPeers(vmd: () => VmdApi, setPrimaryDuties: Peers['setPrimaryDuties'] = () => Promise.resolve()): Peers {
  return {
    resources: () => Promise.resolve().then(() => vmd().getResources({})),
    networkStats: () => Promise.resolve({ statsJson: '{}', networkCount: 0 }),
    storageStats: () => Promise.resolve({ enabled: false, osdCount: 0 }),
    stopAllVms: (reason) => Promise.resolve().then(() => vmd().stopAll({ reason })),
    setPrimaryDuties,
    flushRbdLocks: (images) => Promise.resolve({ flushed: [...images], failed: [] }),
  };
}
