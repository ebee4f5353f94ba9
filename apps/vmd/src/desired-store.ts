import { describeError, type Logger } from '@pvc/runtime';
import {
  domainKeys, domainXmlFacts, nodeKeys, paths, watchKey, type DaemonState, type DataSnapshot, type NodeDomainState, type Unsubscribe, type ZkClient,
} from '@pvc/zk';
import type { DesiredVm, GuardFacts } from './model.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What ZK wants, kept current by level-based watches: `/domains` children and, per VM, its name
 * (root value), `state`, `node` and `xml` (for memprov); this node's `domainstate`/`daemonstate`;
 * the names under `/nodes`. Values are decoded through the key table (`@pvc/zk` keys): a bad value
 * is logged there once and reads as unknown, so nothing is done on it. Every change calls
 * `onChange` (the reconciler's trigger). The watches
 * re-arm after reconnects and session expiry (libs/zk), and the apply step re-reads state/node
 * before acting, so a stale value here can delay an action but never cause a wrong one.
 */
export class DesiredStore {
  private readonly vms = new Map<string, Mutable<DesiredVm>>();
  private readonly perVm = new Map<string, Unsubscribe[]>();
  private readonly global: Unsubscribe[] = [];
  private domainState: NodeDomainState | undefined;
  private daemonState: DaemonState | undefined;
  private knownNodes: Set<string> | undefined;

  constructor(
    private readonly zk: ZkClient,
    private readonly node: string,
    private readonly onChange: () => void,
    private readonly logger: Logger,
  ) {}

  /** Starts every watch. */
  start(): void {
    const me = nodeKeys(this.node);
    const log = this.logger;
    this.global.push(
      this.zk.watchChildren(paths.domains, (children) => this.setDomains(children ?? [])),
      this.zk.watchChildren(paths.nodes, (children) => this.changed(() => (this.knownNodes = children ? new Set(children) : undefined))),
      watchKey(this.zk, me.domainState, (v) => this.changed(() => (this.domainState = v)), log),
      watchKey(this.zk, me.daemonState, (v) => this.changed(() => (this.daemonState = v)), log),
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
    let k: ReturnType<typeof domainKeys>;
    try {
      k = domainKeys(uuid);
    } catch (err) {
      this.logger.warn({ uuid, key: `${paths.domains}/${uuid}`, err: describeError(err) }, 'ignoring a malformed VM key');
      return;
    }
    const vm: Mutable<DesiredVm> = { uuid, name: undefined, state: undefined, node: undefined, memoryMiB: undefined };
    this.vms.set(uuid, vm);
    const log = this.logger.child({ uuid });
    // A watch firing after the VM was dropped (or re-added) must not touch the current record.
    const update = (fn: () => void): void => {
      if (this.vms.get(uuid) === vm) this.changed(fn);
    };
    this.perVm.set(uuid, [
      watchKey(this.zk, k.root, (v) => update(() => (vm.name = v)), log),
      watchKey(this.zk, k.state, (v, snap) => update(() => {
        vm.state = v;
        vm.badState = badText(v, snap);
      }), log),
      watchKey(this.zk, k.node, (v) => update(() => (vm.node = v)), log),
      watchKey(this.zk, k.xml, (v) => update(() => (vm.memoryMiB = v === undefined ? undefined : domainXmlFacts(v).memoryMiB)), log),
    ]);
  }

  private drop(uuid: string): void {
    for (const u of this.perVm.get(uuid) ?? []) u();
    this.perVm.delete(uuid);
    this.vms.delete(uuid);
  }
}

/**
 * The stored text when it is a value the key's codec refused (it then reads as unknown), so the
 * plan can name it; an absent or empty key is merely unknown.
 */
function badText(value: unknown, snap: DataSnapshot | undefined): string | undefined {
  return value === undefined && snap !== undefined && snap.data.trim() !== '' ? snap.data : undefined;
}
