import type { Logger } from '@pvc/runtime';
import { bridgeVni } from './domain-bridges.js';
import { readKnownKeys, type KeyReadOptions } from './key-read.js';
import { domainKeys } from './keys.js';
import { domainXmlFacts } from './records.js';
import type { ZkClient } from './types.js';
import type { MigrationMethod, VmSelector, VmState } from './vocab.js';

/**
 * A VM's facts for the Prometheus metrics: its keys (undefined = absent or unreadable), what its
 * stored XML says (the original's API reads the same elements), and its `stats` JSON checked
 * against the original keepalive's shape.
 *
 * @module
 */

/** One `<interface type='bridge'>` of the XML. */
export interface VmInterface {
  bridge: string;
  /** The VNI of a `vmbr<vni>` bridge, else the bridge name (the original strips `vmbr`). */
  vni: string;
  mac: string;
  model: string;
}

/** One `<disk>` of the XML: its target device and its source (RBD `pool/volume` or the file). */
export interface VmDisk {
  dev: string;
  source: string;
}

/** Per-interface counters of the `stats` JSON (matched to interfaces by `bridge`). */
export interface VmNetCounters {
  bridge: string;
  rd_bytes: number;
  rd_packets: number;
  rd_errors: number;
  rd_drops: number;
  wr_bytes: number;
  wr_packets: number;
  wr_errors: number;
  wr_drops: number;
}

/** Per-disk counters of the `stats` JSON (matched to disks by `name` = source). */
export interface VmDiskCounters {
  name: string;
  rd_req: number;
  rd_bytes: number;
  wr_req: number;
  wr_bytes: number;
}

/** The parts of the `stats` JSON the metrics use, each only when it has the original's shape. */
export interface VmStatsFacts {
  memStats?: Readonly<Record<string, number>>;
  cpuStats?: { cpu_time?: number; user_time?: number; system_time?: number };
  disks?: readonly VmDiskCounters[];
  nets?: readonly VmNetCounters[];
}

export interface VmMetricsFacts {
  uuid: string;
  name?: string | undefined;
  state?: VmState | undefined;
  node?: string | undefined;
  lastNode?: string | undefined;
  failedReason?: string | undefined;
  profile?: string | null | undefined;
  nodeLimit?: string[] | undefined;
  selector?: VmSelector | undefined;
  autostart?: boolean | undefined;
  migrationMethod?: MigrationMethod | undefined;
  tags: string[];
  /** From the XML; undefined when the XML lacks it. */
  description?: string | undefined;
  machine?: string | undefined;
  vcpus?: number | undefined;
  /** `sockets/cores/threads` of `<cpu><topology>`. */
  topology?: string | undefined;
  memoryMiB?: number | undefined;
  interfaces: VmInterface[];
  disks: VmDisk[];
  stats?: VmStatsFacts | undefined;
}

const INTERFACE_EL = /<interface\b[\s\S]*?<\/interface>/g;
const DISK_EL = /<disk\b[\s\S]*?<\/disk>/g;
const DESCRIPTION_EL = /<description>([\s\S]*?)<\/description>/;
const TOPOLOGY_EL = /<topology\b[^>]*>/;

function unescapeXml(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

function attr(open: string | undefined, name: string): string | undefined {
  const m = open === undefined ? null : new RegExp(`\\s${name}\\s*=\\s*(['"])([^'"]*)\\1`).exec(open);
  return m?.[2] === undefined ? undefined : unescapeXml(m[2]);
}

function firstOpen(el: string, tag: string): string | undefined {
  return new RegExp(`<${tag}\\b[^>]*>`).exec(el)?.[0];
}

/** What the metrics read from a stored domain XML (not a validating parser; libvirt validated it). */
export function domainXmlMetrics(xml: string): Pick<VmMetricsFacts, 'description' | 'machine' | 'vcpus' | 'topology' | 'memoryMiB' | 'interfaces' | 'disks'> {
  const size = domainXmlFacts(xml);
  const topo = TOPOLOGY_EL.exec(xml)?.[0];
  const [s, c, t] = [attr(topo, 'sockets'), attr(topo, 'cores'), attr(topo, 'threads')];
  const interfaces: VmInterface[] = [];
  for (const [el] of xml.matchAll(INTERFACE_EL)) {
    const bridge = attr(firstOpen(el, 'source'), 'bridge');
    if (attr(firstOpen(el, 'interface'), 'type') !== 'bridge' || bridge === undefined) continue;
    const vni = bridgeVni(bridge);
    interfaces.push({ bridge, vni: vni === undefined ? bridge : String(vni), mac: attr(firstOpen(el, 'mac'), 'address') ?? '', model: attr(firstOpen(el, 'model'), 'type') ?? '' });
  }
  const disks: VmDisk[] = [];
  for (const [el] of xml.matchAll(DISK_EL)) {
    const dev = attr(firstOpen(el, 'target'), 'dev');
    const src = firstOpen(el, 'source');
    if (dev !== undefined) disks.push({ dev, source: attr(src, 'name') ?? attr(src, 'file') ?? attr(src, 'dev') ?? '' });
  }
  const desc = DESCRIPTION_EL.exec(xml)?.[1];
  return {
    description: desc === undefined ? undefined : unescapeXml(desc.trim()),
    machine: attr(firstOpen(xml, 'type'), 'machine'),
    vcpus: size.vcpus, memoryMiB: size.memoryMiB,
    topology: s !== undefined && c !== undefined && t !== undefined ? `${s}/${c}/${t}` : undefined,
    interfaces, disks,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function counters<T>(v: unknown, idField: string, fields: readonly string[]): T[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const ok = v.every((e) => isRecord(e) && typeof e[idField] === 'string' && fields.every((f) => num(e[f])));
  return ok ? (v as T[]) : undefined;
}

const NET_FIELDS = ['rd_bytes', 'rd_packets', 'rd_errors', 'rd_drops', 'wr_bytes', 'wr_packets', 'wr_errors', 'wr_drops'] as const;
const DISK_FIELDS = ['rd_req', 'rd_bytes', 'wr_req', 'wr_bytes'] as const;

/**
 * The `stats` JSON's parts with the original's shape; each part of another shape is left out and
 * logged naming the key. Undefined when the key holds no JSON object.
 */
export function vmStatsFacts(v: unknown, key: string, logger?: Logger): VmStatsFacts | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) {
    logger?.warn({ key }, `bad value in Zookeeper at ${key}: not a JSON object; no statistics for the VM`);
    return undefined;
  }
  const out: VmStatsFacts = {};
  const bad: string[] = [];
  if (isRecord(v.mem_stats) && Object.values(v.mem_stats).every(num)) out.memStats = v.mem_stats as Record<string, number>;
  else if (v.mem_stats !== undefined) bad.push('mem_stats');
  if (isRecord(v.cpu_stats) && Object.values(v.cpu_stats).every(num)) out.cpuStats = v.cpu_stats as VmStatsFacts['cpuStats'] & object;
  else if (v.cpu_stats !== undefined) bad.push('cpu_stats');
  const nets = counters<VmNetCounters>(v.net_stats, 'bridge', NET_FIELDS);
  if (nets) out.nets = nets;
  else if (v.net_stats !== undefined) bad.push('net_stats');
  const disks = counters<VmDiskCounters>(v.disk_stats, 'name', DISK_FIELDS);
  if (disks) out.disks = disks;
  else if (v.disk_stats !== undefined) bad.push('disk_stats');
  if (bad.length > 0) logger?.warn({ key, fields: bad }, `bad value in Zookeeper at ${key}: ${bad.join(', ')} not in the original's shape; those statistics are left out`);
  return out;
}

/** Reads one VM's facts; undefined when the VM does not exist. */
export async function readVmMetricsFacts(zk: ZkClient, uuid: string, opts: KeyReadOptions = {}): Promise<VmMetricsFacts | undefined> {
  const d = domainKeys(uuid);
  if ((await zk.exists(d.root.path)) === undefined) return undefined;
  const [[name, xml, state, node, lastNode, failedReason, profile, nodeLimit, selector, autostart, method, stats], tags] = await Promise.all([
    readKnownKeys(zk, [d.root, d.xml, d.state, d.node, d.lastNode, d.failedReason, d.profile, d.nodeLimit, d.nodeSelector,
      d.nodeAutostart, d.migrationMethod, d.stats], opts),
    zk.children(d.tags.path, opts).catch(() => [] as string[]),
  ]);
  const fromXml = xml === undefined ? { interfaces: [], disks: [] } : domainXmlMetrics(xml);
  return {
    uuid, name: name === '' ? undefined : name, state, node, lastNode, failedReason, profile, nodeLimit, selector, autostart,
    migrationMethod: method, tags: tags.sort(), ...fromXml, stats: vmStatsFacts(stats, d.stats.path, opts.logger),
  };
}
