// Test builders (not exported from the package): a healthy run+ready node and a 1 GiB VM on hv0.
import type { NodeFacts, VmRequest } from '../types.js';

/** A run+ready node with 16 GiB free and moderate load; override any figure. */
export function node(name: string, over: Partial<Omit<NodeFacts, 'name'>> = {}): NodeFacts {
  return {
    name,
    daemonState: 'run',
    domainState: 'ready',
    memTotalMiB: 32768,
    memUsedMiB: 16384,
    memFreeMiB: 16384,
    memAllocMiB: 8192,
    memProvMiB: 8192,
    vcpuAlloc: 8,
    cpuLoad: 1,
    domainsCount: 4,
    ...over,
  };
}

/** A 1024 MiB, 2-vCPU VM currently on `hv0`; override any field. */
export function vm(over: Partial<VmRequest> = {}): VmRequest {
  return { name: 'vm1', memoryMiB: 1024, vcpus: 2, currentNode: 'hv0', ...over };
}
