import { paths } from '@pvc/zk';
import type { KeepalivedEvent } from '../../../apps/keepaliled/src/model.js';
import type { SimCluster } from './sim-cluster.js';

/**
 * The safety and liveness properties every simulated run must keep:
 * - no VM runs on two nodes at once (hypervisor truth, checked every step);
 * - never two powered nodes with the primary duties on at once;
 * - no fence without quorum (ZK up and the fencer's session connected when it starts);
 * - no fence of a node that kept its keepalives (its last written keepalive is a whole
 *   detection window old when it is declared dead);
 * - at the end (faults healed, flushed nodes readied): every VM runs exactly once, where ZK
 *   says, and there is exactly one primary.
 */
export class Invariants {
  readonly violations: string[] = [];
  zkUp = true;

  constructor(private readonly cluster: SimCluster) {}

  private fail(text: string): void {
    const line = `${(this.cluster.elapsed() / 1000).toFixed(3)} s: ${text}`;
    if (!this.violations.includes(line)) this.violations.push(line);
  }

  step(): void {
    for (const [vm, where] of this.cluster.placements()) {
      if (where.length > 1) this.fail(`${this.cluster.vmName(vm)} runs on ${where.join(' and ')}`);
    }
    const primaries = [...this.cluster.nodes.values()].filter((n) => n.powered && n.duties).map((n) => n.name);
    if (primaries.length > 1) this.fail(`primary duties on ${primaries.join(' and ')}`);
  }

  onEvent(e: KeepalivedEvent): void {
    if (e.kind === 'fence-start') {
      const fencer = this.cluster.nodes.get(e.fencer);
      if (!this.zkUp || fencer?.zk?.state !== 'connected') this.fail(`${e.fencer} fences ${e.node} without quorum`);
    }
    if (e.kind === 'node-dead') {
      const target = this.cluster.nodes.get(e.node);
      const windowMs = this.cluster.spec.keepaliveInterval * 1000 * this.cluster.spec.fenceIntervals;
      const silent = this.cluster.clock.now() - (target?.lastKeepaliveOk ?? 0);
      if (silent < windowMs) this.fail(`${e.node} declared dead after only ${silent} ms without a keepalive`);
    }
  }

  /** End-of-run checks (after healing and settling). */
  async final(): Promise<void> {
    const placements = this.cluster.placements();
    for (const vm of this.cluster.vmIds()) {
      const name = this.cluster.vmName(vm);
      const where = placements.get(vm) ?? [];
      const assigned = await this.cluster.read(paths.domain(vm).node);
      const state = await this.cluster.read(paths.domain(vm).state);
      if (where.length !== 1) this.fail(`at the end ${name} runs on ${where.length} nodes (state ${state}, node ${assigned})`);
      else if (where[0] !== assigned) this.fail(`at the end ${name} runs on ${where[0]} but ZK assigns it to ${assigned}`);
    }
    const primaries = [...this.cluster.nodes.values()].filter((n) => n.duties).map((n) => n.name);
    const named = await this.cluster.read(paths.config.primaryNode);
    if (primaries.length !== 1 || primaries[0] !== named) this.fail(`at the end primary duties on [${primaries.join(', ')}], primary_node ${named}`);
  }
}
