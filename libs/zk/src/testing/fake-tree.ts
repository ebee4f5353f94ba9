import type { Clock } from '@pvc/runtime';
import { ZkError, zkError, ZkTransactionError } from '../errors.js';
import { parentOf } from '../core/write.js';
import type { RawWatchEvent } from '../core/session.js';
import type { DataSnapshot, ZkOp, ZkOpResult, ZkStat } from '../types.js';

interface FakeNode {
  data: string;
  version: number;
  cversion: number;
  /** Sequence counter for sequential children: counts child creations only (see create). */
  seq: number;
  czxid: bigint;
  mzxid: bigint;
  ctime: number;
  mtime: number;
  ephemeralOwner: string | undefined;
  children: Set<string>;
}

/** Result of an applied transaction: per-op results and the watch events it fires. */
export interface Applied {
  results: ZkOpResult[];
  events: RawWatchEvent[];
}

/** Zookeeper's path rules (as node-zookeeper-client validates them). */
export function validatePath(path: string): void {
  const bad =
    typeof path !== 'string' ||
    !path.startsWith('/') ||
    (path.length > 1 && path.endsWith('/')) ||
    path.includes('//') ||
    /\/\.\.?(\/|$)/.test(path);
  if (bad) throw new ZkError('BAD_ARGUMENTS', `invalid node path ${JSON.stringify(path)}`, { path });
}

/**
 * The in-memory znode tree of the fake server: versions, cversions, sequence suffixes, ephemeral
 * owners, and all-or-nothing transactions (an undo log is replayed when any op fails, and no
 * watch event of a failed transaction is ever emitted).
 */
export class FakeTree {
  private readonly nodes = new Map<string, FakeNode>();
  /** Paths of the ephemeral nodes of each owner, in the order of {@link nodes}. */
  private readonly ephemerals = new Map<string, Set<string>>();
  private zxid = 0n;

  constructor(private readonly clock: Clock) {
    this.nodes.set('/', this.newNode('', undefined, 0n));
  }

  stat(path: string): ZkStat | undefined {
    validatePath(path);
    const n = this.nodes.get(path);
    return n ? toStat(n) : undefined;
  }

  get(path: string): DataSnapshot {
    const n = this.must(path);
    return { data: n.data, stat: toStat(n) };
  }

  children(path: string): string[] {
    return [...this.must(path).children];
  }

  /** Paths of the ephemeral nodes owned by `sessionId`. */
  ephemeralsOf(sessionId: string): string[] {
    return [...(this.ephemerals.get(sessionId) ?? [])];
  }

  /** Every path below (and including) `root`, with its data, in sorted order. */
  dump(root = '/'): Record<string, string> {
    const out: Record<string, string> = {};
    const prefix = root === '/' ? '/' : `${root}/`;
    for (const p of [...this.nodes.keys()].sort()) {
      if (p === root || p.startsWith(prefix)) out[p] = (this.nodes.get(p) as FakeNode).data;
    }
    return out;
  }

  /** Applies `ops` atomically on behalf of `owner` (the session id, for ephemerals). */
  apply(ops: readonly ZkOp[], owner: string): Applied {
    const undo: (() => void)[] = [];
    const events: RawWatchEvent[] = [];
    const results: ZkOpResult[] = [];
    const zxid = ++this.zxid;
    for (const [i, op] of ops.entries()) {
      try {
        results.push(this.applyOne(op, owner, zxid, undo, events));
      } catch (err) {
        for (const u of undo.reverse()) u();
        this.zxid--;
        if (err instanceof ZkError) throw new ZkTransactionError(err.code, i, op.path);
        throw err;
      }
    }
    return { results, events };
  }

  private applyOne(op: ZkOp, owner: string, zxid: bigint, undo: (() => void)[], events: RawWatchEvent[]): ZkOpResult {
    validatePath(op.path);
    switch (op.type) {
      case 'create':
        return { type: 'create', path: this.create(op, owner, zxid, undo, events) };
      case 'set':
        return { type: 'set', stat: this.setData(op.path, op.data, op.version ?? -1, zxid, undo, events) };
      case 'check':
        this.checkVersion(this.must(op.path), op.path, op.version);
        return { type: 'check' };
      case 'delete':
        this.remove(op.path, op.version ?? -1, zxid, undo, events);
        return { type: 'delete' };
    }
  }

  private create(
    op: Extract<ZkOp, { type: 'create' }>,
    owner: string,
    zxid: bigint,
    undo: (() => void)[],
    events: RawWatchEvent[],
  ): string {
    if (op.path === '/') throw zkError('NODE_EXISTS', '/');
    const parentPath = parentOf(op.path);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw zkError('NO_NODE', op.path);
    if (parent.ephemeralOwner !== undefined) throw zkError('NO_CHILDREN_FOR_EPHEMERALS', op.path);
    // The 10-digit sequence suffix. Observed on ZooKeeper 3.8: it counts the parent's child
    // creations only, while stat.cversion counts creations and deletions.
    const path = op.sequential ? `${op.path}${String(parent.seq).padStart(10, '0')}` : op.path;
    if (this.nodes.has(path)) throw zkError('NODE_EXISTS', path);
    const name = path.slice(parentPath === '/' ? 1 : parentPath.length + 1);
    const n = this.newNode(op.data ?? '', op.ephemeral ? owner : undefined, zxid);
    this.nodes.set(path, n);
    this.owned(n, path, true);
    parent.children.add(name);
    parent.cversion++;
    parent.seq++;
    undo.push(() => {
      this.nodes.delete(path);
      this.owned(n, path, false);
      parent.children.delete(name);
      parent.cversion--;
      parent.seq--;
    });
    events.push({ type: 'created', path }, { type: 'children', path: parentPath });
    return path;
  }

  private setData(path: string, data: string, version: number, zxid: bigint, undo: (() => void)[], events: RawWatchEvent[]): ZkStat {
    const n = this.must(path);
    this.checkVersion(n, path, version);
    const old = { data: n.data, version: n.version, mzxid: n.mzxid, mtime: n.mtime };
    Object.assign(n, { data, version: n.version + 1, mzxid: zxid, mtime: this.clock.now() });
    undo.push(() => Object.assign(n, old));
    events.push({ type: 'changed', path });
    return toStat(n);
  }

  private remove(path: string, version: number, _zxid: bigint, undo: (() => void)[], events: RawWatchEvent[]): void {
    if (path === '/') throw zkError('BAD_ARGUMENTS', '/');
    const n = this.must(path);
    this.checkVersion(n, path, version);
    if (n.children.size > 0) throw zkError('NOT_EMPTY', path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath) as FakeNode;
    const name = path.slice(parentPath === '/' ? 1 : parentPath.length + 1);
    this.nodes.delete(path);
    this.owned(n, path, false);
    parent.children.delete(name);
    parent.cversion++;
    undo.push(() => {
      this.nodes.set(path, n);
      this.owned(n, path, true);
      parent.children.add(name);
      parent.cversion--;
    });
    events.push({ type: 'deleted', path }, { type: 'children', path: parentPath });
  }

  /** Keeps {@link ephemerals} in step with {@link nodes}: `path` (node `n`) was added or deleted. */
  private owned(n: FakeNode, path: string, added: boolean): void {
    const owner = n.ephemeralOwner;
    if (owner === undefined) return;
    let paths = this.ephemerals.get(owner);
    if (added) {
      if (!paths) this.ephemerals.set(owner, (paths = new Set()));
      paths.add(path);
    } else if (paths) {
      paths.delete(path);
      if (paths.size === 0) this.ephemerals.delete(owner);
    }
  }

  private checkVersion(n: FakeNode, path: string, version: number): void {
    if (version !== -1 && n.version !== version) throw zkError('BAD_VERSION', path);
  }

  private must(path: string): FakeNode {
    validatePath(path);
    const n = this.nodes.get(path);
    if (!n) throw zkError('NO_NODE', path);
    return n;
  }

  private newNode(data: string, owner: string | undefined, zxid: bigint): FakeNode {
    const now = this.clock.now();
    return { data, version: 0, cversion: 0, seq: 0, czxid: zxid, mzxid: zxid, ctime: now, mtime: now, ephemeralOwner: owner, children: new Set() };
  }
}

function toStat(n: FakeNode): ZkStat {
  return {
    version: n.version,
    cversion: n.cversion,
    numChildren: n.children.size,
    dataLength: Buffer.byteLength(n.data, 'utf8'),
    ephemeralOwner: n.ephemeralOwner,
    czxid: n.czxid,
    mzxid: n.mzxid,
    ctime: n.ctime,
    mtime: n.mtime,
  };
}
