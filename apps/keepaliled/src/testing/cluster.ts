/**
 * Cluster state in a (fake or real) Zookeeper for keepaliled's tests and the simulator: the base
 * keys, nodes and VMs created whole, as the original's writers create them.
 *
 * @module
 */
import { baseKeys, codec, newDomainObject, newNodeObject, paths, type WritePair, type ZkClient } from '@pvc/zk';

/** Creates the base keys of an initialised cluster; `primary_node` = `none`, maintenance off. */
export async function seedBase(zk: ZkClient, opts: { primary?: string; maintenance?: boolean; selector?: string } = {}): Promise<void> {
  for (const key of baseKeys()) await zk.ensurePath(key);
  await zk.write([
    [paths.schema.version, '15'],
    [paths.config.primaryNode, opts.primary ?? 'none'],
    [paths.config.maintenance, opts.maintenance ? 'true' : 'false'],
    [paths.config.migrationTargetSelector, opts.selector ?? 'mem'],
  ]);
}

/** A node to create; every figure has a default that makes it a healthy placement target. */
export interface SeedNode {
  name: string;
  mode?: 'coordinator' | 'hypervisor';
  daemonState?: string;
  domainState?: string;
  routerState?: string;
  /** Default: a BMC at `<name>-bmc`, user `admin`, password `secret-<name>`. */
  ipmi?: { hostname: string; username: string; password: string };
  memTotalMiB?: number;
  memFreeMiB?: number;
  memUsedMiB?: number;
  runningDomains?: string[];
  cpus?: number;
}

/** Creates a node (in one transaction), then sets its states and figures. */
export async function seedNode(zk: ZkClient, nowMs: number, n: SeedNode): Promise<void> {
  const mode = n.mode ?? 'hypervisor';
  const ipmi = n.ipmi ?? { hostname: `${n.name}-bmc`, username: 'admin', password: `secret-${n.name}` };
  const def = newNodeObject({
    name: n.name, daemonMode: mode, nowMs, staticData: `${n.cpus ?? 8} 6.1.0-18-amd64 debian-12 x86_64`, pvcVersion: '1.0.3', ipmi,
  });
  await zk.createObject(def.root, def.entries);
  const k = paths.node(n.name);
  const pairs: WritePair[] = [
    [k.daemonState, n.daemonState ?? 'run'],
    [k.domainState, n.domainState ?? 'ready'],
    [k.routerState, n.routerState ?? (mode === 'coordinator' ? 'secondary' : 'client')],
    [k.memTotal, codec.int.encode(n.memTotalMiB ?? 32_768)],
    [k.memUsed, codec.int.encode(n.memUsedMiB ?? 4_096)],
    [k.memFree, codec.int.encode(n.memFreeMiB ?? 28_672)],
  ];
  if (n.runningDomains) {
    pairs.push([k.runningDomains, n.runningDomains.join(' ')], [k.domainsCount, codec.int.encode(n.runningDomains.length)]);
  }
  await zk.write(pairs);
}

/** A libvirt domain XML with a name, memory (in `unit`) and vCPUs. */
export function domainXml(name: string, memory: number, unit = 'MiB', vcpus = 2): string {
  return `<domain type='kvm'>\n  <name>${name}</name>\n  <memory unit='${unit}'>${memory}</memory>\n  <vcpu placement='static'>${vcpus}</vcpu>\n</domain>\n`;
}

/** A VM to create. */
export interface SeedDomain {
  uuid: string;
  name?: string;
  node: string;
  state?: string;
  memoryMiB?: number;
  vcpus?: number;
  rbdList?: string[];
  nodeLimit?: string[];
  selector?: string;
}

/** Creates a VM with every v15 key (one transaction). */
export async function seedDomain(zk: ZkClient, d: SeedDomain): Promise<void> {
  const name = d.name ?? `vm-${d.uuid.slice(0, 4)}`;
  const def = newDomainObject({
    uuid: d.uuid, name, node: d.node, state: d.state ?? 'start', xml: domainXml(name, d.memoryMiB ?? 1024, 'MiB', d.vcpus ?? 2),
    ...(d.rbdList ? { rbdList: d.rbdList } : {}),
    ...(d.nodeLimit ? { nodeLimit: d.nodeLimit } : {}),
    ...(d.selector ? { nodeSelector: d.selector } : {}),
  });
  await zk.createObject(def.root, def.entries);
}

/** The VM keys a recovery touches, for assertions. */
export async function domainKeys(zk: ZkClient, uuid: string): Promise<{ state?: string; node?: string; lastnode?: string; autostart?: string }> {
  const d = paths.domain(uuid);
  const [state, node, lastnode, autostart] = await Promise.all([d.state, d.node, d.lastNode, d.nodeAutostart].map((p) => zk.read(p)));
  return { state, node, lastnode, autostart };
}

/** One `write` or `multi` seen by {@link interceptZk}. */
export interface SeenWrite {
  kind: 'write' | 'multi';
  at: number;
  /** Paths in the transaction, in order (for `multi`, of every op). */
  paths: string[];
  /** Data per path (write pairs, multi set/create ops). */
  data: Record<string, string>;
  outcome?: 'ok' | 'failed';
}

/**
 * Wraps a client so a test can see every `write`/`multi` transaction (with the clock time) and
 * hold them back: `hold` is awaited before each one is sent (a slow link or server).
 */
export function interceptZk(zk: ZkClient, clock: { now(): number }): { zk: ZkClient; writes: SeenWrite[]; hold: { fn?: (w: SeenWrite) => Promise<void> } } {
  const writes: SeenWrite[] = [];
  const hold: { fn?: (w: SeenWrite) => Promise<void> } = {};
  const track = async <T>(w: SeenWrite, send: () => Promise<T>): Promise<T> => {
    writes.push(w);
    if (hold.fn) await hold.fn(w);
    try {
      const r = await send();
      w.outcome = 'ok';
      return r;
    } catch (err) {
      w.outcome = 'failed';
      throw err;
    }
  };
  const wrapped: ZkClient = new Proxy(zk, {
    get(target, prop) {
      if (prop === 'write') {
        return (pairs: Iterable<WritePair>, opts?: Parameters<ZkClient['write']>[1]) => {
          const list = [...pairs];
          const w: SeenWrite = { kind: 'write', at: clock.now(), paths: list.map(([p]) => p), data: Object.fromEntries(list) };
          return track(w, () => target.write(list, opts));
        };
      }
      if (prop === 'multi') {
        return (ops: Parameters<ZkClient['multi']>[0], opts?: Parameters<ZkClient['multi']>[1]) => {
          const data: Record<string, string> = {};
          for (const op of ops) if ((op.type === 'set' || op.type === 'create') && op.data !== undefined) data[op.path] = op.data;
          const w: SeenWrite = { kind: 'multi', at: clock.now(), paths: ops.map((o) => o.path), data };
          return track(w, () => target.multi(ops, opts));
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { zk: wrapped, writes, hold };
}

/**
 * Writes the keepalive of each listed node every `intervalMs` (as their own keepaliled would),
 * starting now. `silence(node)` stops one (the node dies), `revive(node)` starts it again.
 */
export function heartbeats(zk: ZkClient, clock: { now(): number; every(ms: number, fn: () => void): () => void }, nodes: string[], intervalMs: number): {
  silence(node: string): void;
  revive(node: string): void;
  lastBeat(node: string): number | undefined;
  stop(): void;
} {
  const alive = new Set(nodes);
  const last = new Map<string, number>();
  const beat = (): void => {
    for (const n of alive) {
      const at = clock.now();
      zk.write([[paths.node(n).keepalive, codec.int.encode(Math.floor(at / 1000))]]).then(
        () => void last.set(n, at),
        () => undefined,
      );
    }
  };
  beat();
  const stop = clock.every(intervalMs, beat);
  return {
    silence: (n) => void alive.delete(n),
    revive: (n) => void alive.add(n),
    lastBeat: (n) => last.get(n),
    stop,
  };
}
