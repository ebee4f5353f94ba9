/**
 * OSD stats (pvc-inventory §3.1, §1.5) as a pure function: the original's merge of
 * `ceph osd dump --format json`, `ceph osd df --format json` and the human table of
 * `ceph osd status` (parsed as the original does, Ceph 14 and Ceph 16 layouts), with its field
 * names. An OSD missing from any of the three gets no stats (the original's KeyError skip).
 */
import type { OsdStats } from '@pvc/zk';

/** The stats of each OSD found in all three, and why each other wanted OSD has none. */
export interface OsdStatsResult {
  stats: Map<string, OsdStats>;
  /** OSD id → reason, for the wanted OSDs without stats. */
  missing: Map<string, string>;
}

type Rec = Record<string, unknown>;
type DumpPart = Pick<OsdStats, 'uuid' | 'up' | 'in' | 'primary_affinity'>;
type DfPart = Pick<OsdStats, 'utilization' | 'var' | 'pgs' | 'kb' | 'kb_used' | 'kb_used_data' | 'kb_used_omap' | 'kb_used_meta' | 'kb_avail' | 'weight' | 'reweight' | 'class'>;
/** The `osd status` columns, as Ceph prints them (`2489M`, `exists,up`). */
export type StatusPart = Pick<OsdStats, 'node' | 'used' | 'avail' | 'wr_ops' | 'wr_data' | 'rd_ops' | 'rd_data' | 'state'>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

function list(doc: unknown, field: string, command: string): Rec[] {
  if (!isRec(doc) || !Array.isArray(doc[field])) throw new Error(`${command}: no "${field}" list in its JSON`);
  return doc[field].filter(isRec);
}

function num(rec: Rec, field: string, where: string): number {
  const v = rec[field];
  if (typeof v !== 'number') throw new Error(`${where}: "${field}" is ${v === undefined ? 'missing' : JSON.stringify(v)}`);
  return v;
}

function str(rec: Rec, field: string, where: string): string {
  const v = rec[field];
  if (typeof v !== 'string') throw new Error(`${where}: "${field}" is ${v === undefined ? 'missing' : JSON.stringify(v)}`);
  return v;
}

function dumpPart(o: Rec): DumpPart {
  const w = `osd ${String(o.osd)} in ceph osd dump`;
  return { uuid: str(o, 'uuid', w), up: num(o, 'up', w), in: num(o, 'in', w), primary_affinity: num(o, 'primary_affinity', w) };
}

function dfPart(o: Rec): DfPart {
  const w = `osd ${String(o.id)} in ceph osd df`;
  return {
    utilization: num(o, 'utilization', w),
    var: num(o, 'var', w),
    pgs: num(o, 'pgs', w),
    kb: num(o, 'kb', w),
    kb_used: num(o, 'kb_used', w),
    kb_used_data: num(o, 'kb_used_data', w),
    kb_used_omap: num(o, 'kb_used_omap', w),
    kb_used_meta: num(o, 'kb_used_meta', w),
    kb_avail: num(o, 'kb_avail', w),
    weight: num(o, 'crush_weight', w),
    reweight: num(o, 'reweight', w),
    class: str(o, 'device_class', w),
  };
}

// Terminal colour and OSC sequences, as the original strips them.
const ANSI = /\x1b(\[.*?[@-~]|\].*?(\x07|\x1b\\))/g;
const DIGITS = /^\d+$/;

/**
 * The rows of `ceph osd status` by OSD id. Ceph 14 draws a `|` table
 * (`| 0 | hv1.example | 318G | 463G | 213 | 1430k | 22 | 124k | exists,up |`), Ceph 16 prints
 * plain columns (`0  hv1.example  2489M  236G  0  0  0  0  exists,up`); the header and border
 * lines are skipped. `node` is the host's first label. A Ceph 16 row without all nine columns (a
 * down OSD whose host column is empty) is skipped: the original would shift its columns.
 */
export function parseOsdStatus(text: string): Map<string, StatusPart> {
  const out = new Map<string, StatusPart>();
  for (const raw of text.split('\n')) {
    const f = raw.replace(ANSI, '').split(/\s+/).filter((s) => s !== '');
    let c: string[];
    if (f[0] === '|' && DIGITS.test(f[1] ?? '')) c = [1, 3, 5, 7, 9, 11, 13, 15, 17].map((i) => f[i] ?? '');
    else if (DIGITS.test(f[0] ?? '') && f.length >= 9) c = f.slice(0, 9);
    else continue;
    const [id = '', host = '', used = '', avail = '', wrOps = '', wrData = '', rdOps = '', rdData = '', state = ''] = c;
    if (state === '' || state === '|') continue;
    out.set(id, { node: host.split('.')[0] ?? host, used, avail, wr_ops: wrOps, wr_data: wrData, rd_ops: rdOps, rd_data: rdData, state });
  }
  return out;
}

/** Builds id → part from `items`; an item that does not parse is recorded under its id. */
function byId<T>(items: Rec[], idField: string, part: (o: Rec) => T, bad: Map<string, string>): Map<string, T> {
  const out = new Map<string, T>();
  for (const o of items) {
    const id = o[idField];
    if (typeof id !== 'number') continue;
    try {
      out.set(String(id), part(o));
    } catch (err) {
      bad.set(String(id), err instanceof Error ? err.message : String(err));
    }
  }
  return out;
}

/**
 * The stats of each OSD in `wanted` (the `/ceph/osds` children), merged in the original's field
 * order. Throws when a JSON document lacks its list (`osds` / `nodes`) entirely.
 */
export function osdStats(osdDump: unknown, osdDf: unknown, osdStatusText: string, wanted: readonly string[]): OsdStatsResult {
  const bad = new Map<string, string>();
  const dump = byId(list(osdDump, 'osds', 'ceph osd dump'), 'osd', dumpPart, bad);
  const df = byId(list(osdDf, 'nodes', 'ceph osd df'), 'id', dfPart, bad);
  const status = parseOsdStatus(osdStatusText);
  const result: OsdStatsResult = { stats: new Map(), missing: new Map() };
  for (const id of wanted) {
    const d = dump.get(id);
    const f = df.get(id);
    const s = status.get(id);
    if (d && f && s) result.stats.set(id, { ...d, ...f, ...s });
    else result.missing.set(id, bad.get(id) ?? `osd ${id} is not in ${!d ? 'ceph osd dump' : !f ? 'ceph osd df' : 'ceph osd status'}`);
  }
  return result;
}
