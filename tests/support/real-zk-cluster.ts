/**
 * Cluster set-up and probes for benches on a real ensemble: the original's ZK layout (base keys,
 * node objects, VM objects) written with libs/zk's object definitions, as the simulator's
 * `SimCluster.setUp` does; and {@link reconnectProbe}, the cost of one vmd's reconnection.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { realClock, silentLogger } from '@pvc/runtime';
import { baseKeys, newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { WireStats } from './counting-real-zk.js';
import { RealZkNode, type NodeVm } from './real-zk-node.js';

/** `perNode` VMs for each node, with UUIDs and names as the simulator's bench uses. */
export function clusterVms(names: readonly string[], perNode: number): Map<string, NodeVm[]> {
  return new Map(names.map((node, i) => [node, Array.from({ length: perNode }, (_, j): NodeVm => ({
    uuid: `00000000-0000-4000-8000-${String(i * perNode + j + 1).padStart(12, '0')}`, name: `vm${i + 1}x${j + 1}`, memoryMiB: 256,
  }))]));
}

/** Base keys, cluster config, one node object per name (the first `coordinators` are coordinators), every VM (state start). */
export async function seedCluster(admin: ZkClient, names: readonly string[], vms: Map<string, NodeVm[]>, coordinators: number): Promise<void> {
  for (const key of baseKeys()) await admin.create(key, key === paths.schema.version ? '15' : '');
  await admin.write([[paths.config.primaryNode, 'none'], [paths.config.maintenance, 'false'], [paths.config.migrationTargetSelector, 'mem']]);
  for (const [i, name] of names.entries()) {
    const obj = newNodeObject({
      name, daemonMode: i < coordinators ? 'coordinator' : 'hypervisor', nowMs: realClock.now(), staticData: '8 6.1.0 debian x86_64',
      pvcVersion: 'bench', ipmi: { hostname: `${name}-lom`, username: 'admin', password: 'bench' },
    });
    await admin.createObject(obj.root, obj.entries);
    await admin.write([[paths.node(name).domainState, 'ready']]);
  }
  const all = names.flatMap((node) => (vms.get(node) ?? []).map((vm) => ({ node, vm })));
  for (let i = 0; i < all.length; i += 100) {
    await Promise.all(all.slice(i, i + 100).map(({ node, vm }) => {
      const xml = `<domain type='kvm'><name>${vm.name}</name><uuid>${vm.uuid}</uuid><memory unit='MiB'>${vm.memoryMiB}</memory><vcpu>1</vcpu></domain>`;
      const obj = newDomainObject({ uuid: vm.uuid, name: vm.name, xml, node, state: 'start' });
      return admin.createObject(obj.root, obj.entries);
    }));
  }
}

/** What one vmd's reconnection cost. */
export interface ProbeResult {
  vms: number;
  /** Reads the reconnection caused (the watches' re-reads). */
  reads: number;
  /** From the drop until the reads stopped, ms. */
  ms: number;
  /** Longest event-loop block meanwhile, ms. */
  maxBlockMs: number;
  /** Connections lost again after the induced one. */
  relost: number;
  /** Connections vmd lost during its start-up reads (before the induced drop). */
  startupLost: number;
  /** Start-up: reads, ms until they calmed down, and this process's CPU meanwhile, ms. */
  startupReads: number;
  startupMs: number;
  startupCpuMs: number;
  /** CPU time this process spent from the drop until the reads stopped, ms. */
  cpuMs: number;
}

/**
 * ONE node (keepaliled + vmd) of a cluster of `vms` VMs in all, alone in this process: after its
 * start-up reads, vmd's connection is dropped (`dropConnection`, the session kept — what a silent
 * server or a stall longer than the read timeout does) and the re-reads, the time they take and
 * the longest event-loop block are measured. A real host runs one vmd, so this is the per-host cost
 * of a reconnection, free of the in-process bench's other nodes.
 */
export async function reconnectProbe(hosts: readonly string[], node: string, vms: readonly NodeVm[], totalVms: number, env: { coordinators: readonly string[] }): Promise<ProbeResult> {
  const stats = new WireStats();
  const n = new RealZkNode(node, vms, {
    hosts, coordinators: env.coordinators, keepaliveIntervalS: 5, fenceIntervals: 6, stats, logger: silentLogger(),
    event: () => undefined, keepalive: () => undefined,
  });
  const s0 = realClock.now();
  const sCpu0 = process.cpuUsage();
  n.start();
  try {
    // Start-up: until the reads calm down (4 per VM of the cluster, then only the periodic ones).
    const quiet = async (everyMs: number, below: number, tries: number): Promise<void> => {
      for (let i = 0, last = stats.ops.getData; i < tries; i++) {
        await realClock.sleep(everyMs);
        if (stats.ops.getData - last < below) return;
        last = stats.ops.getData;
      }
    };
    await realClock.sleep(2_000);
    await quiet(2_000, 200, 150);
    // The quiet check's last 2-s period is not start-up (less than 200 reads in it).
    const startupMs = realClock.now() - s0 - 2_000;
    const sCpu = process.cpuUsage(sCpu0);
    const startupReads = stats.ops.getData;
    const vmd = n.sessions[1];
    if (!vmd) throw new Error('vmd session not started');
    const lag = monitorEventLoopDelay({ resolution: 10 });
    const before = stats.ops.getData;
    const lost0 = stats.suspended.get('vmd') ?? 0;
    const t0 = realClock.now();
    const cpu0 = process.cpuUsage();
    lag.enable();
    vmd.dropConnection();
    // Done: the re-reads issued and the rate back to the periodic reads (< 50 in 500 ms).
    let endMs = t0;
    for (let i = 0, last = before; i < 600; i++) {
      await realClock.sleep(500);
      const d = stats.ops.getData - last;
      last = stats.ops.getData;
      if (d >= 50) endMs = realClock.now();
      else if (last - before >= totalVms * 4) break;
      // No burst of re-reads for 10 s: the reconnection re-read what it needed (nothing, when the
      // session was kept and every watch was armed).
      else if (realClock.now() - endMs > 10_000) break;
    }
    lag.disable();
    const cpu = process.cpuUsage(cpu0);
    return {
      startupLost: lost0, startupReads, startupMs, startupCpuMs: (sCpu.user + sCpu.system) / 1000, cpuMs: (cpu.user + cpu.system) / 1000,
      vms: totalVms, reads: stats.ops.getData - before, ms: endMs - t0, maxBlockMs: lag.max / 1e6,
      relost: (stats.suspended.get('vmd') ?? 0) - lost0 - 1,
    };
  } finally {
    await n.stop();
  }
}
