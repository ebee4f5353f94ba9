import type { WritePair, ZkOp } from '@pvc/zk';

/**
 * A `set` op of a guarded transaction (`zk.multi`) from a pair encoded by the key table
 * (`pair(spec, value)`), so values in a multi go through the same codecs as `zk.write`.
 */
export function setOp([path, data]: WritePair, version?: number): ZkOp {
  return version === undefined ? { type: 'set', path, data } : { type: 'set', path, data, version };
}
