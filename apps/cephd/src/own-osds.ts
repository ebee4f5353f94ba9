/**
 * Each node's cephd keeps its own OSDs' keys (pvc-inventory §1.5, §8): the OSDs Ceph reports on
 * this host (`ceph osd metadata`, `hostname` = this node's name, first label) get a
 * `/ceph/osds/<id>` object if PVC has none — created atomically, root and every key in one
 * transaction, as the original's `osd.add` does — and their `node`, `device`, `fsid`,
 * `fsid/osd` and `fsid/cluster` refreshed where they differ (the original refreshes device and
 * fsids at start through `ceph-volume lvm list`). Done at start, retried each interval until one
 * attempt succeeds; never deletes an object.
 *
 * Without `ceph-volume` and LVM (these machines' OSDs are bluestore files): `device` is the
 * bluestore block (`/dev/<devices>` for a block device, the file's path for a file OSD),
 * `db_device` the dedicated DB device or `""`, `lvm`, `lvm/vg`, `lvm/lv` are `""`.
 */
import { describeError, retryUntilDone, type Clock, type Logger } from '@pvc/runtime';
import { codec, isZkError, osdKeys, paths, readKey, type ObjectEntry, type WritePair, type ZkClient } from '@pvc/zk';
import type { CephCli } from './host/ceph-cli.js';

/** An OSD of this node, as Ceph reports it. */
export interface LocalOsd {
  id: string;
  device: string;
  dbDevice: string;
  /** The OSD's uuid (`fsid`, `fsid/osd`). */
  fsid: string;
  /** The cluster's fsid (`fsid/cluster`). */
  clusterFsid: string;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The original's stats placeholder, written by `osd.add` until the primary's first stats write. */
export const OSD_STATS_PLACEHOLDER =
  '{"uuid": "|", "up": 0, "in": 0, "primary_affinity": "|", "utilization": "|", "var": "|", "pgs": "|", "kb": "|", "weight": "|", "reweight": "|", "node": "|", "used": "|", "avail": "|", "wr_ops": "|", "wr_data": "|", "rd_ops": "|", "rd_data": "|", "state": "|"}';

function deviceOf(m: Rec): string {
  if (text(m.bluestore_bdev_access_mode) === 'blk') {
    const dev = text(m.bluestore_bdev_devices) || text(m.devices);
    if (dev && !dev.includes(',')) return `/dev/${dev}`;
  }
  return text(m.bluestore_bdev_path) || text(m.bluestore_bdev_dev_node);
}

function dbDeviceOf(m: Rec): string {
  if (text(m.bluefs_dedicated_db) !== '1') return '';
  return text(m.bluefs_db_dev_node) || text(m.bluefs_db_path) || text(m.bluefs_db_devices);
}

/**
 * The OSDs of `node` in `ceph osd metadata` JSON, with their uuids and the cluster fsid from
 * `ceph osd dump` JSON. Pure. Throws when either document is not Ceph's shape.
 */
export function localOsds(metadata: unknown, dump: unknown, node: string): LocalOsd[] {
  if (!Array.isArray(metadata)) throw new Error('ceph osd metadata: not a list');
  if (!isRec(dump) || !Array.isArray(dump.osds)) throw new Error('ceph osd dump: no "osds" list in its JSON');
  const clusterFsid = text(dump.fsid);
  const uuids = new Map<string, string>();
  for (const o of dump.osds) if (isRec(o) && typeof o.osd === 'number') uuids.set(String(o.osd), text(o.uuid));
  return metadata
    .filter(isRec)
    .filter((m) => typeof m.id === 'number' && text(m.hostname).split('.')[0] === node)
    .map((m) => ({ id: String(m.id), device: deviceOf(m), dbDevice: dbDeviceOf(m), fsid: uuids.get(String(m.id)) ?? '', clusterFsid }))
    .sort((a, b) => Number(a.id) - Number(b.id));
}

/** The new object of `osd`: every v15 OSD key, as `osd.add` writes them. */
export function newOsdEntries(osd: LocalOsd, node: string): ObjectEntry[] {
  return [
    ['', ''], ['node', node], ['device', osd.device], ['db_device', osd.dbDevice],
    ['fsid', osd.fsid], ['fsid/osd', osd.fsid], ['fsid/cluster', osd.clusterFsid],
    ['lvm', ''], ['lvm/vg', ''], ['lvm/lv', ''], ['is_split', codec.bool.encode(false)], ['stats', OSD_STATS_PLACEHOLDER],
  ];
}

/** Dependencies of {@link OwnOsds}. */
export interface OwnOsdsDeps {
  zk: ZkClient;
  cli: CephCli;
  clock: Clock;
  logger: Logger;
  node: string;
  commandTimeoutMs: number;
  zkTimeoutMs: number;
  /** Pause between failed attempts (the keepalive interval). */
  retryMs: number;
}

/** What one successful attempt did. */
export interface OwnOsdsResult {
  created: string[];
  refreshed: string[];
  unchanged: string[];
}

/** See the module comment. */
export class OwnOsds {
  private lastProblem = '';

  constructor(private readonly deps: OwnOsdsDeps) {}

  /** One attempt: creates or refreshes every local OSD's object. Throws when Ceph or Zookeeper fails. */
  async once(signal?: AbortSignal): Promise<OwnOsdsResult> {
    const { cli, zk, node } = this.deps;
    const opts = { timeoutMs: this.deps.commandTimeoutMs, signal };
    const [metadata, dump] = await Promise.all([cli.json('ceph', ['osd', 'metadata'], opts), cli.json('ceph', ['osd', 'dump'], opts)]);
    const result: OwnOsdsResult = { created: [], refreshed: [], unchanged: [] };
    for (const osd of localOsds(metadata, dump, node)) {
      const root = paths.ceph.osd(osd.id).root;
      try {
        await zk.createObject(root, newOsdEntries(osd, node), { timeoutMs: this.deps.zkTimeoutMs, signal });
        result.created.push(osd.id);
        continue;
      } catch (err) {
        if (!isZkError(err, 'NODE_EXISTS')) throw err;
      }
      const changed = await this.refresh(osd, signal);
      (changed ? result.refreshed : result.unchanged).push(osd.id);
    }
    return result;
  }

  /** Writes the keys of an existing object that differ from what Ceph reports; true if any did. */
  private async refresh(osd: LocalOsd, signal: AbortSignal | undefined): Promise<boolean> {
    const k = osdKeys(osd.id);
    const want: [typeof k.node, string][] = [[k.node, this.deps.node], [k.device, osd.device], [k.fsid, osd.fsid], [k.fsidOsd, osd.fsid], [k.fsidCluster, osd.clusterFsid]];
    const opts = { timeoutMs: this.deps.zkTimeoutMs, signal, logger: this.deps.logger };
    const have = await Promise.all(want.map(([spec]) => readKey(this.deps.zk, spec, opts)));
    const pairs: WritePair[] = want.filter(([, v], i) => have[i] !== v).map(([spec, v]) => [spec.path, v]);
    if (pairs.length === 0) return false;
    await this.deps.zk.write(pairs, { timeoutMs: this.deps.zkTimeoutMs, signal });
    return true;
  }

  /** Attempts at once, then `retryMs` after each failed attempt, until one succeeds or `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return retryUntilDone(this.deps.clock, this.deps.retryMs, () => this.attempt(signal), signal);
  }

  private async attempt(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return true;
    try {
      const r = await this.once(signal);
      this.deps.logger.info({ ...r }, "this node's OSDs are in Zookeeper");
      return true;
    } catch (err) {
      if (signal.aborted) return true;
      const problem = describeError(err);
      if (problem !== this.lastProblem) this.deps.logger.warn({ err: problem, retryMs: this.deps.retryMs }, "cannot record this node's OSDs yet; retrying");
      this.lastProblem = problem;
      return false;
    }
  }
}
