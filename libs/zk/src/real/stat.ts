import type { Stat } from 'node-zookeeper-client';
import type { ZkStat } from '../types.js';

/** Converts the wire Stat (8-byte buffers) into {@link ZkStat}. */
export function toStat(s: Stat): ZkStat {
  const owner = s.ephemeralOwner.readBigInt64BE(0);
  return {
    version: s.version,
    cversion: s.cversion,
    numChildren: s.numChildren,
    dataLength: s.dataLength,
    ephemeralOwner: owner === 0n ? undefined : s.ephemeralOwner.toString('hex'),
    czxid: s.czxid.readBigInt64BE(0),
    mzxid: s.mzxid.readBigInt64BE(0),
    ctime: Number(s.ctime.readBigInt64BE(0)),
    mtime: Number(s.mtime.readBigInt64BE(0)),
  };
}
