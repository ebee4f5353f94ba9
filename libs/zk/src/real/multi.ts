import zookeeper from 'node-zookeeper-client';
import type { Transaction } from 'node-zookeeper-client';
import { ZkError, ZkTransactionError } from '../errors.js';
import type { ZkOp, ZkOpResult } from '../types.js';
import { codeName, toZkError } from './errors-map.js';
import { toStat } from './stat.js';

/** Wire op codes of multi results (ZooDefs.OpCode). */
const OP_CREATE = 1;
const OP_DELETE = 2;
const OP_SET_DATA = 5;
const OP_CHECK = 13;
const OP_ERROR = -1;

interface RawResult {
  type: number;
  path?: string;
  stat?: Parameters<typeof toStat>[0];
  err?: number;
}

/**
 * node-zookeeper-client's Transaction turns a version of 0 into -1 (`version || -1`), which
 * would silently drop a version check. Invariant: after each versioned op we write the exact
 * version into the queued op ourselves.
 */
function pinVersion(tx: Transaction, version: number): void {
  const ops = (tx as unknown as { ops: { version: number }[] }).ops;
  const last = ops[ops.length - 1];
  if (last) last.version = version;
}

function addOp(tx: Transaction, op: ZkOp): void {
  const M = zookeeper.CreateMode;
  switch (op.type) {
    case 'create': {
      const mode = op.ephemeral
        ? op.sequential ? M.EPHEMERAL_SEQUENTIAL : M.EPHEMERAL
        : op.sequential ? M.PERSISTENT_SEQUENTIAL : M.PERSISTENT;
      tx.create(op.path, Buffer.from(op.data ?? '', 'utf8'), mode);
      return;
    }
    case 'set':
      tx.setData(op.path, Buffer.from(op.data, 'utf8'), op.version ?? -1);
      pinVersion(tx, op.version ?? -1);
      return;
    case 'check':
      tx.check(op.path, op.version);
      pinVersion(tx, op.version);
      return;
    case 'delete':
      tx.remove(op.path, op.version ?? -1);
      pinVersion(tx, op.version ?? -1);
      return;
  }
}

function toResult(r: RawResult): ZkOpResult {
  if (r.type === OP_CREATE) return { type: 'create', path: r.path ?? '' };
  if (r.type === OP_SET_DATA && r.stat) return { type: 'set', stat: toStat(r.stat) };
  if (r.type === OP_CHECK) return { type: 'check' };
  if (r.type === OP_DELETE) return { type: 'delete' };
  throw new ZkError('MARSHALLING_ERROR', `unexpected multi result type ${r.type}`);
}

/** Commits `ops` as one transaction; on failure reports the failing op's index, path and code. */
export function runMulti(
  tx: Transaction,
  ops: readonly ZkOp[],
  cb: (err: unknown, value: ZkOpResult[] | undefined) => void,
): void {
  for (const op of ops) addOp(tx, op);
  tx.commit((err, results: RawResult[] | undefined) => {
    if (!err) {
      try {
        cb(null, (results ?? []).map(toResult));
      } catch (e) {
        cb(e, undefined);
      }
      return;
    }
    const idx = (results ?? []).findIndex((r) => r.type === OP_ERROR && r.err !== 0);
    if (idx < 0 || results === undefined) {
      cb(toZkError(err), undefined);
      return;
    }
    const failed = results[idx];
    cb(new ZkTransactionError(codeName(failed?.err ?? -1), idx, ops[idx]?.path), undefined);
  });
}
