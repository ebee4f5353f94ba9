import type { LibvirtState } from './model.js';

/**
 * A running VM's `domains/<uuid>/stats` (inventory §1.3): what the Hypervisor port reports
 * ({@link DomainStats}, our names) and the JSON the original's keepalive writes
 * ({@link VmStatsRecord}, its names: `collect_vm_stats` in pvcnoded/util/keepalive.py), which the
 * original's API reads (`getInformationFromXML`: disks matched by `name` = source name, networks by
 * `bridge`). Layout and the fields we cannot fill: docs/vmd.md ("VM stats").
 */

/** libvirt's memory statistics, under the names Python's `virDomain.memoryStats()` gives them. */
export const MEMORY_STAT_NAMES = [
  'actual', 'swap_in', 'swap_out', 'major_fault', 'minor_fault', 'unused', 'available', 'usable', 'last_update',
  'disk_caches', 'hugetlb_pgalloc', 'hugetlb_pgfail', 'rss',
] as const;
/** One memory statistic (KiB, except the fault and page counts and `last_update`, seconds). */
export type MemoryStatName = (typeof MEMORY_STAT_NAMES)[number];

/** I/O counters of one disk. */
export interface DiskStats {
  /** The source: RBD `pool/volume`, or the file (the original's `name`). */
  readonly source: string;
  readonly readRequests: number;
  readonly readBytes: number;
  readonly writeRequests: number;
  readonly writeBytes: number;
  /** Error count; -1 = not reported (QEMU reports none; libvirt's blockStats says -1 too). */
  readonly errors: number;
}

/** Counters of one bridge interface, as the host's tap device sees them. */
export interface NetStats {
  /** The tap device (`vnet0`). */
  readonly dev: string;
  readonly bridge: string;
  readonly rxBytes: number;
  readonly rxPackets: number;
  readonly rxErrors: number;
  readonly rxDrops: number;
  readonly txBytes: number;
  readonly txPackets: number;
  readonly txErrors: number;
  readonly txDrops: number;
}

/** Host CPU time the domain used, ns (libvirt's total CPU stats). */
export interface CpuStats {
  readonly cpuTimeNs?: number;
  readonly userTimeNs?: number;
  readonly systemTimeNs?: number;
}

/** What the Hypervisor port reports for one active domain. Absent statistics are left out. */
export interface DomainStats {
  readonly uuid: string;
  readonly state: LibvirtState;
  readonly maxMemKiB: number;
  /** Current (balloon) memory, KiB. */
  readonly memKiB: number;
  readonly vcpus: number;
  readonly cpuTimeNs: number;
  readonly memory: Readonly<Partial<Record<MemoryStatName, number>>>;
  readonly cpu: CpuStats;
  readonly disks: readonly DiskStats[];
  readonly nets: readonly NetStats[];
}

/** libvirt state names as the original's `libvirt_vm_states` table spells them in `stats`. */
export type StatsState = Uppercase<LibvirtState>;

/** The original's `stats` JSON, field for field. */
export interface VmStatsRecord {
  state: StatsState;
  /** KiB. */
  maxmem: number;
  /** KiB. */
  livemem: number;
  cpus: number;
  /** ns. */
  cputime: number;
  mem_stats: Partial<Record<MemoryStatName, number>>;
  cpu_stats: { cpu_time?: number; user_time?: number; system_time?: number };
  disk_stats: { name: string; rd_req: number; rd_bytes: number; wr_req: number; wr_bytes: number; err: number }[];
  net_stats: {
    name: string; bridge: string;
    rd_bytes: number; rd_packets: number; rd_errors: number; rd_drops: number;
    wr_bytes: number; wr_packets: number; wr_errors: number; wr_drops: number;
  }[];
}

/** The `stats` record of one domain, in the original's layout. */
export function vmStatsRecord(d: DomainStats): VmStatsRecord {
  return {
    state: d.state.toUpperCase() as StatsState,
    maxmem: d.maxMemKiB,
    livemem: d.memKiB,
    cpus: d.vcpus,
    cputime: d.cpuTimeNs,
    mem_stats: { ...d.memory },
    cpu_stats: defined({ cpu_time: d.cpu.cpuTimeNs, user_time: d.cpu.userTimeNs, system_time: d.cpu.systemTimeNs }),
    disk_stats: d.disks.map((x) => ({
      name: x.source, rd_req: x.readRequests, rd_bytes: x.readBytes, wr_req: x.writeRequests, wr_bytes: x.writeBytes, err: x.errors,
    })),
    net_stats: d.nets.map((x) => ({
      name: x.dev, bridge: x.bridge,
      rd_bytes: x.rxBytes, rd_packets: x.rxPackets, rd_errors: x.rxErrors, rd_drops: x.rxDrops,
      wr_bytes: x.txBytes, wr_packets: x.txPackets, wr_errors: x.txErrors, wr_drops: x.txDrops,
    })),
  };
}

/**
 * The `stats` records to write: one per domain libvirt runs (state running) that PVC knows. As in
 * the original, a paused or otherwise not-running domain gets none (its last record goes stale),
 * and a domain PVC does not know gets none (it has no `/domains` key).
 */
export function statsToWrite(stats: readonly DomainStats[], known: ReadonlySet<string>): [uuid: string, record: VmStatsRecord][] {
  return stats.filter((d) => d.state === 'running' && known.has(d.uuid)).map((d) => [d.uuid, vmStatsRecord(d)]);
}

function defined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
