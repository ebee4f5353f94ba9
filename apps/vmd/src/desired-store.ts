import { describeError, type Logger } from '@pvc/runtime';
import {
  domainKeys, domainXmlFacts, nodeKeys, paths, watchKey, type DaemonState, type DataSnapshot, type NodeDomainState, type Unsubscribe, type ZkClient,
} from '@pvc/zk';
import type { DesiredVm, GuardFacts } from './model.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One VM under `/domains`: its `node` is always watched, the rest only while it concerns this node. */
interface Entry {
  readonly vm: Mutable<DesiredVm>;
  /** The `node` watch. */
  unwatchNode: Unsubscribe;
  /** The name, `state` and `xml` watches, armed while the VM concerns this node ({@link DesiredStore.concerns}). */
  detail: Unsubscribe[] | undefined;
}

/**
 * What ZK wants, kept current by level-based watches: `/domains` children; every VM's `node`; and
 * the name (root value), `state` and `xml` (for memprov) of the VMs that concern this node — those
 * assigned here and those libvirt runs here ({@link observe}), the only ones the plan can act on
 * (a VM assigned elsewhere and not running here has no row but "none"). So a node watches one key
 * per VM in the cluster plus three per VM of its own, not four per VM in the cluster: a state
 * change of another node's VM notifies nobody here, and the watches re-armed after a session
 * expiry grow with the cluster's VM count only by one key each (the original watched every VM's
 * keys from every node). Also this node's `domainstate`/`daemonstate` and the names under `/nodes`.
 *
 * Values are decoded through the key table (`@pvc/zk` keys): a bad value is logged there once and
 * reads as unknown, so nothing is done on it. Every change calls `onChange` (the reconciler's
 * trigger). A VM that begins to concern this node reads as incomplete until its keys arrive (the
 * plan leaves it alone; the arrival triggers the next pass). The watches re-arm after reconnects
 * and session expiry (libs/zk), and the apply step re-reads state/node before acting, so a stale
 * value here can delay an action but never cause a wrong one.
 */
export class DesiredStore {
  private readonly vms = new Map<string, Entry>();
  private readonly global: Unsubscribe[] = [];
  private observed: ReadonlySet<string> = new Set();
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
    for (const uuid of [...this.vms.keys()]) this.drop(uuid);
  }

  /**
   * The domains libvirt runs here (each pass tells): their VMs concern this node whatever their
   * `node` says (a VM to send away, a stale copy to destroy), so their details are watched.
   */
  observe(uuids: Iterable<string>): void {
    const before = this.observed;
    this.observed = new Set(uuids);
    for (const uuid of new Set([...before, ...this.observed])) this.rescope(uuid);
  }

  /** A copy of the desired state of the VMs that concern this node (the plan's input). */
  snapshot(): Map<string, DesiredVm> {
    const out = new Map<string, DesiredVm>();
    for (const [uuid, e] of this.vms) if (e.detail !== undefined) out.set(uuid, { ...e.vm });
    return out;
  }

  /** Every VM under `/domains` (those of other nodes too). */
  uuids(): Set<string> {
    return new Set(this.vms.keys());
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

  /** Whether a VM concerns this node: assigned here or run by libvirt here. */
  private concerns(uuid: string, e: Entry): boolean {
    return e.vm.node === this.node || this.observed.has(uuid);
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
    // Registered before the watch is armed: its callback may run before watchKey returns.
    const entry: Entry = { vm, unwatchNode: () => undefined, detail: undefined };
    this.vms.set(uuid, entry);
    // The store's own logger: a bad value's warning names the key (and so the VM), and a child
    // logger per VM of the cluster would cost every vmd memory in proportion to the cluster.
    entry.unwatchNode = watchKey(this.zk, k.node, (v) => this.update(uuid, vm, () => {
      vm.node = v;
      this.rescope(uuid);
    }), this.logger);
    this.rescope(uuid);
  }

  /** A watch firing after the VM was dropped (or re-added) must not touch the current record. */
  private update(uuid: string, vm: DesiredVm, fn: () => void): void {
    if (this.vms.get(uuid)?.vm === vm) this.changed(fn);
  }

  /** Arms or drops a VM's detail watches as it begins or ends to concern this node. */
  private rescope(uuid: string): void {
    const e = this.vms.get(uuid);
    if (e === undefined) return;
    const wanted = this.concerns(uuid, e);
    if (wanted && e.detail === undefined) this.watchDetail(uuid, e);
    else if (!wanted && e.detail !== undefined) {
      for (const u of e.detail) u();
      e.detail = undefined;
      Object.assign(e.vm, { name: undefined, state: undefined, badState: undefined, memoryMiB: undefined });
    }
  }

  private watchDetail(uuid: string, e: Entry): void {
    const { vm } = e;
    const k = domainKeys(uuid);
    const log = this.logger.child({ uuid });
    // Registered before the watches are armed (a callback may run before watchKey returns); a
    // watch firing after its detail was dropped (the VM left this node) must not fill it again.
    const detail: Unsubscribe[] = [];
    e.detail = detail;
    const update = (fn: () => void): void => {
      if (this.vms.get(uuid)?.detail === detail) this.update(uuid, vm, fn);
    };
    detail.push(
      watchKey(this.zk, k.root, (v) => update(() => (vm.name = v)), log),
      watchKey(this.zk, k.state, (v, snap) => update(() => {
        vm.state = v;
        vm.badState = badText(v, snap);
      }), log),
      watchKey(this.zk, k.xml, (v) => update(() => (vm.memoryMiB = v === undefined ? undefined : domainXmlFacts(v).memoryMiB)), log),
    );
  }

  private drop(uuid: string): void {
    const e = this.vms.get(uuid);
    if (e === undefined) return;
    e.unwatchNode();
    for (const u of e.detail ?? []) u();
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
