import type { Exec } from '@pvc/runtime';
import type { LiveDevices } from '../domain-xml.js';
import { VmdError } from '../errors.js';
import type { ObservedDomain } from '../model.js';
import { MEMORY_STAT_NAMES, type DiskStats, type DomainStats, type MemoryStatName, type NetStats } from '../vm-stats.js';

/**
 * `virsh domstats` output → {@link DomainStats}. One call gives the breakdowns the original's
 * keepalive collects per VM (`memoryStats`, `getCPUStats`, `blockStats`, `interfaceStats`) for
 * every running domain; the state and top-level figures come from `getInfo` as in the original
 * (`info()`), and the live XML supplies what the counters are named by (disk sources, bridges).
 */

/** The groups requested (`--raw`: numbers unformatted; `--nowait`: a domain busy with a job, e.g. migrating, does not hold up the keepalive). */
export const DOMSTATS_ARGS = ['domstats', '--raw', '--nowait', '--list-running', '--state', '--cpu-total', '--balloon', '--vcpu', '--interface', '--block'] as const;

/**
 * Runs `virsh -c <uri> domstats …` (the binding has no bulk-stats call) and parses its output.
 * Rejects with `LIBVIRT_UNAVAILABLE` when virsh cannot reach libvirtd, else `LIBVIRT_ERROR`.
 */
export async function readDomstats(exec: Exec, uri: string, timeoutMs: number): Promise<DomstatsRecord[]> {
  const r = await exec.run('virsh', ['-c', uri, ...DOMSTATS_ARGS], { timeoutMs });
  if (r.exitCode !== 0) {
    const msg = `virsh domstats: ${(r.stderr.trim() || r.stdout.trim() || `exit ${r.exitCode}`).replace(/^error:\s*/gm, '').replace(/\n+/g, '; ')}`;
    const down = /failed to connect|Connection refused|No such file or directory/i.test(msg);
    throw new VmdError(down ? 'LIBVIRT_UNAVAILABLE' : 'LIBVIRT_ERROR', msg, { retryable: down });
  }
  return parseDomstats(r.stdout);
}

/** One `Domain: '<name>'` block of the output: its `key=value` lines. */
export interface DomstatsRecord {
  readonly name: string;
  readonly fields: ReadonlyMap<string, string>;
}

const HEADER = /^Domain:\s*(?:'(.*)'|(.*))\s*$/;

/**
 * Parses `virsh domstats` output: a `Domain: 'name'` line, then indented `key=value` lines (the
 * value runs to the end of the line and may contain `=`). Lines before the first header and lines
 * without `=` are ignored.
 */
export function parseDomstats(text: string): DomstatsRecord[] {
  const out: { name: string; fields: Map<string, string> }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = HEADER.exec(line);
    if (header) {
      out.push({ name: header[1] ?? header[2] ?? '', fields: new Map() });
      continue;
    }
    const eq = line.indexOf('=');
    const current = out.at(-1);
    if (eq > 0 && current) current.fields.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

/** The domstats key of each memory statistic (`balloon.` + the name, except these two). */
const BALLOON_KEY: Partial<Record<MemoryStatName, string>> = { actual: 'balloon.current', last_update: 'balloon.last-update' };

/** What `getInfo` says of a domain: the original's `info()` (state and the four top-level figures). */
export type DomainInfoFigures = Pick<ObservedDomain, 'uuid' | 'state' | 'maxMemKiB' | 'memKiB' | 'vcpus' | 'cpuTimeNs'>;

/**
 * The statistics of one domain from its info, its domstats record and its live devices. Info
 * figures are taken as they are, so a group `--nowait` skipped (a domain busy with a job) leaves
 * only its breakdown empty. A disk or bridge interface libvirt reports nothing for is left out
 * (the original would fail the whole VM).
 */
export function domainStatsFrom(rec: DomstatsRecord, info: DomainInfoFigures, devices: LiveDevices): DomainStats {
  const num = (key: string): number | undefined => {
    const v = rec.fields.get(key);
    const n = v === undefined || v.trim() === '' ? NaN : Number(v);
    return Number.isFinite(n) ? n : undefined;
  };
  const memory: Partial<Record<MemoryStatName, number>> = {};
  for (const name of MEMORY_STAT_NAMES) {
    const v = num(BALLOON_KEY[name] ?? `balloon.${name}`);
    if (v !== undefined) memory[name] = v;
  }
  const cpu = { cpuTimeNs: num('cpu.time'), userTimeNs: num('cpu.user'), systemTimeNs: num('cpu.system') };
  return {
    uuid: info.uuid, state: info.state, maxMemKiB: info.maxMemKiB, memKiB: info.memKiB, vcpus: info.vcpus, cpuTimeNs: info.cpuTimeNs,
    memory,
    cpu: Object.fromEntries(Object.entries(cpu).filter(([, v]) => v !== undefined)),
    disks: diskStats(rec, devices, num),
    nets: netStats(rec, devices, num),
  };
}

type Num = (key: string) => number | undefined;

/** The index `i` of the `<group>.<i>.name` entry naming `dev`. */
function indexOf(rec: DomstatsRecord, group: 'block' | 'net', dev: string, num: Num): number | undefined {
  const count = num(`${group}.count`) ?? 0;
  for (let i = 0; i < count; i++) if (rec.fields.get(`${group}.${i}.name`) === dev) return i;
  return undefined;
}

function diskStats(rec: DomstatsRecord, devices: LiveDevices, num: Num): DiskStats[] {
  const out: DiskStats[] = [];
  for (const d of devices.disks) {
    const i = indexOf(rec, 'block', d.dev, num);
    if (i === undefined) continue;
    const n = (k: string): number => num(`block.${i}.${k}`) ?? 0;
    out.push({
      source: d.source, readRequests: n('rd.reqs'), readBytes: n('rd.bytes'), writeRequests: n('wr.reqs'), writeBytes: n('wr.bytes'),
      errors: num(`block.${i}.errors`) ?? -1,
    });
  }
  return out;
}

function netStats(rec: DomstatsRecord, devices: LiveDevices, num: Num): NetStats[] {
  const out: NetStats[] = [];
  for (const b of devices.bridges) {
    const i = indexOf(rec, 'net', b.dev, num);
    if (i === undefined) continue;
    const n = (k: string): number => num(`net.${i}.${k}`) ?? 0;
    out.push({
      dev: b.dev, bridge: b.bridge,
      rxBytes: n('rx.bytes'), rxPackets: n('rx.pkts'), rxErrors: n('rx.errs'), rxDrops: n('rx.drop'),
      txBytes: n('tx.bytes'), txPackets: n('tx.pkts'), txErrors: n('tx.errs'), txDrops: n('tx.drop'),
    });
  }
  return out;
}
