import { describeError, type Logger } from '@pvc/runtime';
import { paths, type Unsubscribe, type ZkClient } from '@pvc/zk';
import { xmlMemoryMiB } from './domain-xml.js';
import type { DesiredVm, GuardFacts } from './model.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What ZK wants, kept current by level-based watches: `/domains` children and, per VM, its name
 * (root value), `state`, `node` and `xml` (for memprov); this node's `domainstate`/`daemonstate`;
 * the names under `/nodes`. Every change calls `onChange` (the reconciler's trigger). The watches
 * re-arm after reconnects and session expiry (libs/zk), and the apply step re-reads state/node
 * before acting, so a stale value here can delay an action but never cause a wrong one.
 */
export class DesiredStore {
  private readonly vms = new Map<string, Mutable<DesiredVm>>();
  private readonly perVm = new Map<string, Unsubscribe[]>();
  private readonly global: Unsubscribe[] = [];
  private domainState: string | undefined;
  private daemonState: string | undefined;
  private knownNodes: Set<string> | undefined;

  constructor(
    private readonly zk: ZkClient,
    private readonly node: string,
    private readonly onChange: () => void,
    private readonly logger: Logger,
  ) {}

  /** Starts every watch. */
  start(): void {
    const me = paths.node(this.node);
    this.global.push(
      this.zk.watchChildren(paths.domains, (children) => this.setDomains(children ?? [])),
      this.zk.watchChildren(paths.nodes, (children) => this.changed(() => (this.knownNodes = children ? new Set(children) : undefined))),
      this.zk.watchData(me.domainState, (v) => this.changed(() => (this.domainState = v?.data))),
      this.zk.watchData(me.daemonState, (v) => this.changed(() => (this.daemonState = v?.data))),
    );
  }

  /** Stops every watch. */
  stop(): void {
    for (const u of this.global.splice(0)) u();
    for (const uuid of [...this.perVm.keys()]) this.drop(uuid);
  }

  /** A copy of the current desired state. */
  snapshot(): Map<string, DesiredVm> {
    return new Map([...this.vms].map(([k, v]) => [k, { ...v }]));
  }

  /** The guard facts (the ZK session state comes from the client). */
  guard(): GuardFacts {
    return {
      zkConnected: this.zk.state === 'connected',
      domainState: this.domainState,
      daemonState: this.daemonState,
      knownNodes: this.knownNodes,
    };
  }

  private changed(fn: () => void): void {
    fn();
    this.onChange();
  }

  private setDomains(children: readonly string[]): void {
    const now = new Set(children);
    for (const uuid of [...this.vms.keys()]) if (!now.has(uuid)) this.drop(uuid);
    for (const uuid of children) if (!this.vms.has(uuid)) this.add(uuid);
    this.onChange();
  }

  private add(uuid: string): void {
    let p: ReturnType<typeof paths.domain>;
    try {
      p = paths.domain(uuid);
    } catch (err) {
      this.logger.warn({ uuid, key: `${paths.domains}/${uuid}`, err: describeError(err) }, 'ignoring a malformed VM key');
      return;
    }
    const vm: Mutable<DesiredVm> = { uuid, name: undefined, state: undefined, node: undefined, memoryMiB: undefined };
    this.vms.set(uuid, vm);
    const set = (fn: (v: string | undefined) => void) => (snap: { data: string } | undefined) => {
      if (this.vms.get(uuid) !== vm) return;
      this.changed(() => fn(snap?.data));
    };
    this.perVm.set(uuid, [
      this.zk.watchData(p.root, set((v) => (vm.name = v))),
      this.zk.watchData(p.state, set((v) => (vm.state = v))),
      this.zk.watchData(p.node, set((v) => (vm.node = v))),
      this.zk.watchData(p.xml, set((v) => (vm.memoryMiB = v === undefined ? undefined : xmlMemoryMiB(v)))),
    ]);
  }

  private drop(uuid: string): void {
    for (const u of this.perVm.get(uuid) ?? []) u();
    this.perVm.delete(uuid);
    this.vms.delete(uuid);
  }
}
