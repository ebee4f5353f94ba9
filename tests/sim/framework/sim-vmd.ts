import type { Clock } from '@pvc/runtime';
import { AbortedError } from '@pvc/runtime';
import { paths, type ZkClient } from '@pvc/zk';
import type { NodeResources } from '@pvc/rpc';

/** The hypervisor truth of one simulated node, shared with the invariant checker. */
export interface SimHypervisor {
  readonly name: string;
  readonly running: Set<string>;
  vmLog(what: 'vm-start' | 'vm-stop', vm: string, why: string): void;
}

const START_DELAY_MS = 500;

/**
 * A small stand-in for vmd (the real one is tested against libvirt): every 250 ms, while its ZK
 * session is connected, it starts the VMs assigned here in `start` (after a start delay) and stops
 * VMs that are no longer wanted here. It honours the fence guard — no start while this node's
 * domainstate is `fence-flush` — and handles `unflush` by starting autostart VMs. Nothing is
 * done without ZK, so a cut-off node leaves its VMs running.
 */
export class SimVmd {
  private readonly memory = new Map<string, number>();
  private readonly starting = new Map<string, number>();

  constructor(private readonly deps: { node: string; zk: ZkClient; clock: Clock; hv: SimHypervisor }) {}

  resources(): NodeResources {
    const running = [...this.deps.hv.running].sort();
    const mem = running.reduce((sum, vm) => sum + (this.memory.get(vm) ?? 0), 0);
    return { runningDomains: running, memAllocMib: mem, memProvMib: mem, vcpuAlloc: running.length };
  }

  stopAll(reason: string): { stopped: string[]; failed: string[] } {
    const stopped = [...this.deps.hv.running].sort();
    for (const vm of stopped) this.stop(vm, reason);
    return { stopped, failed: [] };
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (this.deps.zk.state === 'connected') await this.pass().catch(() => undefined);
      await this.deps.clock.sleep(250, signal).catch((err: unknown) => {
        if (!(err instanceof AbortedError)) throw err;
      });
    }
  }

  private stop(vm: string, why: string): void {
    if (this.deps.hv.running.delete(vm)) this.deps.hv.vmLog('vm-stop', vm, why);
  }

  private async pass(): Promise<void> {
    const { zk, node } = this.deps;
    const k = paths.node(node);
    const domainState = await zk.read(k.domainState);
    if (domainState === 'unflush') await this.unflush();
    const uuids = await zk.children(paths.domains);
    for (const uuid of uuids.sort()) {
      const d = paths.domain(uuid);
      const [where, state, xml] = await Promise.all([zk.read(d.node), zk.read(d.state), zk.read(d.xml)]);
      this.memory.set(uuid, Number(/<memory unit='MiB'>(\d+)</.exec(xml ?? '')?.[1] ?? 0));
      const wanted = where === node && state === 'start' && domainState !== 'fence-flush';
      if (wanted && !this.deps.hv.running.has(uuid)) this.startLater(uuid);
      if (!wanted) this.starting.delete(uuid);
      if (!wanted && this.deps.hv.running.has(uuid) && (where !== node || state !== 'start')) this.stop(uuid, `${state} on ${where}`);
    }
  }

  private startLater(uuid: string): void {
    const since = this.starting.get(uuid);
    const now = this.deps.clock.now();
    if (since === undefined) this.starting.set(uuid, now);
    else if (now - since >= START_DELAY_MS) {
      this.starting.delete(uuid);
      this.deps.hv.running.add(uuid);
      this.deps.hv.vmLog('vm-start', uuid, 'assigned here');
    }
  }

  private async unflush(): Promise<void> {
    const { zk, node } = this.deps;
    for (const uuid of (await zk.children(paths.domains)).sort()) {
      const d = paths.domain(uuid);
      const [where, state, auto] = await Promise.all([zk.read(d.node), zk.read(d.state), zk.read(d.nodeAutostart)]);
      if (where === node && state === 'stop' && auto === 'True') await zk.write([[d.state, 'start'], [d.nodeAutostart, 'False']]);
    }
    await zk.write([[paths.node(node).domainState, 'ready']]);
  }
}
