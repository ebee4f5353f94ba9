/**
 * Fake node daemons for the `pvc node` integration tests: small watchers over the rig's real ZK
 * that react to the keys `pvc node flush|ready|primary|secondary` writes the way vmd's flusher
 * and keepaliled's election do (docs/vmd.md "Node flush and ready"; apps/keepaliled/src/primary/
 * election.ts), with knobs to make them stall or fail. The real daemons are tested against these
 * keys in their own suites (vmd flusher specs and cluster test; keepaliled election spec and the
 * sim scenario "operator-handover"). A flush records what it could not do as vmd does: a
 * `failedreason` starting `Flush of <node>: ` (apps/vmd/src/flush/reasons.ts), then `flushed`.
 */
import { codec, paths, type Unsubscribe, type ZkClient } from '@pvc/zk';
import { realClock } from '@pvc/runtime';

/** How the fakes misbehave. */
export interface FakeDaemonKnobs {
  /** Do not react to `flush` / `unflush` / a `primary_node` change at all. */
  stall?: 'flush' | 'unflush' | 'handover';
  /** Mid-flush, after the first VM left, the flushing node's daemon dies (daemonstate `dead`). */
  dieMidFlush?: boolean;
  /** When primary_node is set to someone, this coordinator grabs it instead (a competing write). */
  hijackBy?: string;
  /** Pause between two steps (ms), so that `--wait` sees the intermediate states. */
  stepMs?: number;
  /**
   * VMs a flush cannot move, by UUID: `no-target` = shut down (state stop, node_autostart True,
   * failedreason); `migration` = 3 aborted moves, left running on the node with a failedreason.
   */
  unmovable?: Readonly<Record<string, 'no-target' | 'migration'>>;
}

/** The texts vmd writes (apps/vmd/src/flush/reasons.ts), for a flush of `node` towards `target`. */
export const FAKE_REASONS = {
  noTarget: (node: string, target: string): string =>
    `Flush of ${node}: no target node fits (${node}: current node of the VM; ${target}: 1024 MiB free < 20000 MiB needed); shut down, node_autostart set (started again by node ready)`,
  abort: (target: string): string => `Migration to ${target} failed: Timed out waiting for peer`,
  gaveUp: (node: string, target: string): string => `Flush of ${node}: migration to ${target} failed 3 times: Timed out waiting for peer`,
};

const COMING = 'migrate';

/** Watchers that play vmd (flush/unflush) and keepaliled (primary handover) for every node. */
export class FakeNodeDaemons {
  private readonly unsubs: Unsubscribe[] = [];
  /** Every state change the fakes made, in order (`hv1 routerstate relinquish`, ...). */
  readonly events: string[] = [];

  constructor(private readonly zk: ZkClient, private readonly nodes: readonly string[], private readonly knobs: FakeDaemonKnobs = {}) {}

  /** Starts watching (the first delivery of each watch is the current value, which is ignored unless it asks for work). */
  start(): this {
    for (const n of this.nodes) {
      this.unsubs.push(this.zk.watchData(paths.node(n).domainState, (s) => this.onDomainState(n, s?.data ?? '')));
    }
    this.unsubs.push(this.zk.watchData(paths.config.primaryNode, (s) => this.onPrimaryNode((s?.data ?? 'none').trim())));
    return this;
  }

  stop(): void {
    for (const u of this.unsubs.splice(0)) u();
  }

  /** Wall-clock time (ms) of each event, for bounds on how fast a `--wait` notices it. */
  readonly at = new Map<string, number>();

  private step(): Promise<void> {
    return realClock.sleep(this.knobs.stepMs ?? 60);
  }

  private async set(path: string, value: string, event: string): Promise<void> {
    // Recorded before the write: the CLI under test may see the write (and return) before an
    // await after it would run.
    this.events.push(event);
    this.at.set(event, Date.now());
    await this.zk.write([[path, value]]);
  }

  private async running(node: string): Promise<string[]> {
    return codec.runningDomains.decode((await this.zk.read(paths.node(node).runningDomains)) ?? '', '');
  }

  private async setRunning(node: string, uuids: readonly string[]): Promise<void> {
    await this.zk.write([[paths.node(node).runningDomains, uuids.join(' ')]]);
  }

  /** Moves a running VM from one node to another through `migrate`, like vmd's sender/receiver. */
  private async moveVm(uuid: string, from: string, to: string, lastNode: string): Promise<void> {
    const d = paths.domain(uuid);
    await this.set(d.state, COMING, `${uuid} migrate ${from} → ${to}`);
    await this.zk.write([[d.node, to], [d.lastNode, lastNode]]);
    await this.step();
    await this.setRunning(from, (await this.running(from)).filter((u) => u !== uuid));
    await this.setRunning(to, [...(await this.running(to)), uuid]);
    await this.set(d.state, 'start', `${uuid} start on ${to}`);
  }

  private async onDomainState(node: string, state: string): Promise<void> {
    if (state === 'flush' && this.knobs.stall !== 'flush') await this.flush(node);
    if (state === 'unflush' && this.knobs.stall !== 'unflush') await this.unflush(node);
  }

  private async flush(node: string): Promise<void> {
    const target = this.nodes.find((n) => n !== node);
    if (target === undefined) return;
    for (const uuid of await this.running(node)) {
      await this.step();
      const unmovable = this.knobs.unmovable?.[uuid];
      if (unmovable === 'no-target') await this.shutDownForFlush(uuid, node, target);
      else if (unmovable === 'migration') await this.failMoves(uuid, node, target);
      else await this.moveVm(uuid, node, target, node);
      if (this.knobs.dieMidFlush) return this.set(paths.node(node).daemonState, 'dead', `${node} daemonstate dead`);
    }
    await this.step();
    if ((await this.zk.read(paths.node(node).domainState)) === 'flush') {
      await this.set(paths.node(node).domainState, 'flushed', `${node} domainstate flushed`);
    }
  }

  /** No target: `shutdown` + autostart + failedreason in one write (vmd's flusher), then off and `stop` (its reconciler). */
  private async shutDownForFlush(uuid: string, node: string, target: string): Promise<void> {
    const d = paths.domain(uuid);
    this.events.push(`${uuid} shutdown (no target)`);
    await this.zk.write([[d.state, 'shutdown'], [d.nodeAutostart, 'True'], [d.failedReason, FAKE_REASONS.noTarget(node, target)]]);
    await this.step();
    await this.setRunning(node, (await this.running(node)).filter((u) => u !== uuid));
    await this.set(d.state, 'stop', `${uuid} stop on ${node}`);
  }

  /** Three moves the sender aborts (state start, node back, its failedreason), then the flush's own failedreason. */
  private async failMoves(uuid: string, node: string, target: string): Promise<void> {
    const d = paths.domain(uuid);
    for (let round = 1; round <= 3; round++) {
      await this.set(d.state, COMING, `${uuid} migrate ${node} → ${target} (try ${round})`);
      await this.zk.write([[d.node, target], [d.lastNode, node]]);
      await this.step();
      await this.zk.write([[d.state, 'start'], [d.node, node], [d.lastNode, node], [d.failedReason, FAKE_REASONS.abort(target)]]);
    }
    this.events.push(`${uuid} given up`);
    await this.zk.write([[d.failedReason, FAKE_REASONS.gaveUp(node, target)], [d.lastNode, '']]);
  }

  /** Unflush, before the moves back: autostart VMs start (their start clears failedreason); other flush failures here are cleared. */
  private async restartAndClear(node: string): Promise<void> {
    for (const uuid of (await this.zk.children(paths.domains)).sort()) {
      const d = paths.domain(uuid);
      const [state, vmNode, autostart, reason] = await Promise.all([d.state, d.node, d.nodeAutostart, d.failedReason].map(async (k) => (await this.zk.read(k)) ?? ''));
      if (vmNode !== node) continue;
      if (state === 'stop' && autostart === 'True') {
        await this.zk.write([[d.state, 'start'], [d.lastNode, ''], [d.nodeAutostart, 'False']]);
        await this.step();
        await this.setRunning(node, [...(await this.running(node)), uuid]);
        await this.set(d.failedReason, '', `${uuid} started on ${node}`);
      } else if (reason?.startsWith(`Flush of ${node}: `) === true) {
        await this.set(d.failedReason, '', `${uuid} flush failure cleared`);
      }
    }
  }

  private async unflush(node: string): Promise<void> {
    await this.restartAndClear(node);
    for (const uuid of (await this.zk.children(paths.domains)).sort()) {
      const d = paths.domain(uuid);
      if ((await this.zk.read(d.lastNode)) !== node) continue;
      const from = (await this.zk.read(d.node)) ?? '';
      await this.step();
      await this.moveVm(uuid, from, node, '');
    }
    await this.step();
    if ((await this.zk.read(paths.node(node).domainState)) === 'unflush') {
      await this.set(paths.node(node).domainState, 'ready', `${node} domainstate ready`);
    }
  }

  private async router(node: string): Promise<string> {
    return (await this.zk.read(paths.node(node).routerState)) ?? '';
  }

  private async onPrimaryNode(primary: string): Promise<void> {
    if (this.knobs.stall === 'handover') return;
    const hijacker = this.knobs.hijackBy;
    if (hijacker !== undefined && primary !== hijacker && primary !== 'none' && (await this.router(primary)) === 'secondary') {
      await this.set(paths.config.primaryNode, hijacker, `${hijacker} grabs primary_node`);
      return;
    }
    const old: string[] = [];
    for (const n of this.nodes) {
      if (n === primary || !['primary', 'takeover'].includes(await this.router(n))) continue;
      old.push(n);
      await this.set(paths.node(n).routerState, 'relinquish', `${n} routerstate relinquish`);
      await this.step();
      await this.set(paths.node(n).routerState, 'secondary', `${n} routerstate secondary`);
    }
    if (primary === 'none') return this.contend(old);
    if (this.nodes.includes(primary) && (await this.router(primary)) === 'secondary') {
      await this.set(paths.node(primary).routerState, 'takeover', `${primary} routerstate takeover`);
      await this.step();
      await this.set(paths.node(primary).routerState, 'primary', `${primary} routerstate primary`);
    }
  }

  /** `none`: a `run` secondary coordinator that did not just step down claims the role. */
  private async contend(steppedDown: readonly string[]): Promise<void> {
    for (const n of this.nodes) {
      if (steppedDown.includes(n)) continue;
      const k = paths.node(n);
      const [mode, daemon, router] = await Promise.all([this.zk.read(k.daemonMode), this.zk.read(k.daemonState), this.router(n)]);
      if (mode !== 'coordinator' || daemon !== 'run' || router !== 'secondary') continue;
      await this.set(paths.config.primaryNode, n, `${n} claims primary_node`);
      return;
    }
  }
}
