import type { NodeResources } from '@pvc/rpc';
import type { DesiredVm, ObservedDomain } from './model.js';

/**
 * The node's VM figures for the keepalive (inventory §1.2/§3.1): every active libvirt domain
 * counts (known to PVC or not); memalloc = their live memory; memprov = memalloc + the XML memory
 * of the VMs assigned here that are not running; vcpualloc = their vCPUs.
 */
export function computeResources(node: string, desired: ReadonlyMap<string, DesiredVm>, observed: ReadonlyMap<string, ObservedDomain>): NodeResources {
  const active = [...observed.values()].filter((d) => d.active);
  const memAllocMib = Math.round(active.reduce((s, d) => s + d.memKiB, 0) / 1024);
  let stoppedMib = 0;
  for (const vm of desired.values()) {
    if (vm.node === node && !observed.get(vm.uuid)?.active) stoppedMib += vm.memoryMiB ?? 0;
  }
  return {
    runningDomains: active.map((d) => d.uuid).sort(),
    memAllocMib,
    memProvMib: memAllocMib + stoppedMib,
    vcpuAlloc: active.reduce((s, d) => s + d.vcpus, 0),
  };
}
