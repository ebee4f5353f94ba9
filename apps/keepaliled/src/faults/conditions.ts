/**
 * The original health daemon's cluster fault conditions (pvc-inventory §9) as pure functions:
 * facts read from ZK in, the faults that hold now out. No I/O, no time: the writer
 * (`writer.ts`) reads the facts and stores the result under `/faults/<ID>`.
 *
 * @module
 */
import { isNoTargetReason } from '../fence/rules.js';

/** One health plugin's last result on a node (`monitoring_data/<plugin>`). */
export interface PluginFact {
  name: string;
  /** `health_delta` (0 when absent or unreadable). */
  delta: number;
  message: string;
}

/** What the conditions read of one node. */
export interface NodeFact {
  name: string;
  /** `daemonstate`; undefined when absent or not a known state. */
  daemonState: string | undefined;
  /** `memtotal`, MiB (0 when absent or unreadable). */
  memTotalMiB: number;
  /** `memalloc`, MiB (0 when absent or unreadable). */
  memAllocMiB: number;
  /** The plugins listed in `monitoring_plugins`, each with its stored result. */
  plugins: readonly PluginFact[];
}

/** What the conditions read of one VM. */
export interface VmFact {
  uuid: string;
  /** The `/domains/<uuid>` value; the UUID stands in when it is empty. */
  name: string;
  /** `state`; undefined when absent or unknown. */
  state: string | undefined;
  failedReason: string;
  /** `node_autostart`. */
  nodeAutostart: boolean;
}

/** What the conditions read of one OSD (`/ceph/osds/<id>/stats`). */
export interface OsdFact {
  id: string;
  /**
   * `in` of its stats (1 in, 0 out). Undefined when the stats are absent, unreadable, hold no
   * `in`, or are the original's `"|"` placeholder (uuid `"|"`: no stats written yet).
   */
  in: number | undefined;
}

/** One check of `/ceph/health` (`checks.<name>`). */
export interface CephCheckFact {
  name: string;
  /** `HEALTH_WARN` or `HEALTH_ERR`. */
  severity: string;
  /** `summary.message`. */
  message: string;
}

/** Everything one evaluation needs. The storage facts are absent where storage is not in use. */
export interface ClusterFacts {
  nodes: readonly NodeFact[];
  vms: readonly VmFact[];
  osds?: readonly OsdFact[];
  cephChecks?: readonly CephCheckFact[];
}

/** A fault that holds now: its ID (upper case, a `/faults` child name), delta and message. */
export interface FaultCondition {
  id: string;
  delta: number;
  message: string;
}

/** Deltas of the original's cluster fault table. */
export const FAULT_DELTAS = {
  deadNode: 50,
  cephOsdOut: 50,
  cephWarn: 10,
  cephErr: 50,
  vmFailed: 10,
  /** Ours, beyond the original's table: a VM fence recovery could not place (see below). */
  vmNoTarget: 10,
  memoryOverprovisioned: 50,
} as const;

/** A fault ID as the original forms it: the parts joined by `_`, upper-cased. */
export function faultId(...parts: readonly string[]): string {
  return parts.join('_').toUpperCase();
}

/**
 * The cluster fault decision table. Rows, in output order (nodes and plugins sorted by name, VMs
 * by name then UUID):
 *
 * | condition | ID | delta | message |
 * |---|---|---|---|
 * | plugin `health_delta` > 0 | `NODE_PLUGIN_<PLUGIN>_<NODE>` | trunc(plugin delta / 2) | `Node <node> plugin <plugin> reports: <plugin message>` |
 * | daemonstate `dead` or `fenced` | `DEAD_NODE_<NODE>` | 50 | `Node <node> was dead and/or fenced` |
 * | OSD stats `in` = 0 | `CEPH_OSD_OUT_<ID>` | 50 | `OSD <id> was marked out` |
 * | a `/ceph/health` check of severity `HEALTH_WARN` | `CEPH_WARN_<CHECK>` | 10 | `HEALTH_WARN <check> reported by Ceph: <summary message>` |
 * | a `/ceph/health` check of severity `HEALTH_ERR` | `CEPH_ERR_<CHECK>` | 50 | `HEALTH_ERR <check> reported by Ceph: <summary message>` |
 * | VM state `fail` | `VM_FAILED_<NAME>` | 10 | `VM <name> was failed: <failedreason>` (no `: …` when empty) |
 * | VM state `stop`, `node_autostart` True, `failedreason` starting `Recovery from fenced node ` | `VM_NO_TARGET_<NAME>` | 10 | `VM <name> is stopped, waiting for a recovery target: <failedreason>` |
 * | Σ memalloc ≥ Σ memtotal − largest memtotal, Σ memalloc > 0 | `MEMORY_OVERPROVISIONED` | 50 | `Cluster memory was overprovisioned: <alloc>MB >= <N-1 total>MB (N-1)` |
 *
 * OSDs are in id order, checks by name (the WARN rows, then the ERR rows). The OSD row reads `in`
 * only from stats cephd wrote: the original also raises it for an OSD whose stats are absent (its
 * `.get("in", 0)`) or still the `osd.add` placeholder (which says `"in": 0`), i.e. for every new
 * OSD until the primary's first stats write, and the fault would stay for good — our deviation.
 * Muted checks count (the original does not look at `muted`). The stored health is used as it is,
 * also while `/ceph/stats_state` says it is stale (the original has no such marker).
 * The plugin row: a plugin delta of 1 gives a fault with delta 0, as the original's `int(d / 2)`.
 * The memory row: the original raises it also when nothing is allocated (0 ≥ 0 on a cluster whose
 * nodes have not reported memory yet, or a one-node cluster without VMs); since faults never
 * clear, that would stay for good, so an allocation of 0 raises nothing (our deviation).
 * The no-target row is ours (the original has none; its recovery wrote nothing for such a VM,
 * pvc-inventory §3.4 **[bug?]**): fence recovery writes that `failedreason` when it finds no
 * target, and the VM stays in this state until the recovery retry places it or its node is
 * readied (vmd starts it and clears the flag and the reason), so the fault holds exactly while the
 * VM is down for want of a target. The VM's node is not part of the condition: a node that is
 * back but not readied still keeps the VM down. Delta 10, as a failed VM.
 * Two rows giving the same ID (e.g. two VMs with one name): the first is kept.
 */
export function evaluateFaults(facts: ClusterFacts): FaultCondition[] {
  const nodes = [...facts.nodes].sort((a, b) => cmp(a.name, b.name));
  const out: FaultCondition[] = [];
  for (const n of nodes) out.push(...pluginFaults(n));
  for (const n of nodes) {
    if (n.daemonState === 'dead' || n.daemonState === 'fenced') {
      out.push({ id: faultId('DEAD_NODE', n.name), delta: FAULT_DELTAS.deadNode, message: `Node ${n.name} was dead and/or fenced` });
    }
  }
  out.push(...cephFaults(facts));
  const vms = [...facts.vms].sort((a, b) => cmp(vmName(a), vmName(b)) || cmp(a.uuid, b.uuid));
  for (const vm of vms) {
    const fault = vmFault(vm);
    if (fault) out.push(fault);
  }
  const memory = memoryFault(nodes);
  if (memory) out.push(memory);
  return unique(out);
}

/** The storage rows: OSDs out, then Ceph's WARN and ERR health checks. */
function cephFaults(facts: ClusterFacts): FaultCondition[] {
  const out: FaultCondition[] = [];
  const osds = [...(facts.osds ?? [])].sort((a, b) => Number(a.id) - Number(b.id) || cmp(a.id, b.id));
  for (const o of osds) {
    if (o.in === 0) out.push({ id: faultId('CEPH_OSD_OUT', o.id), delta: FAULT_DELTAS.cephOsdOut, message: `OSD ${o.id} was marked out` });
  }
  const checks = [...(facts.cephChecks ?? [])].sort((a, b) => cmp(a.name, b.name));
  for (const [severity, prefix, delta] of [['HEALTH_WARN', 'CEPH_WARN', FAULT_DELTAS.cephWarn], ['HEALTH_ERR', 'CEPH_ERR', FAULT_DELTAS.cephErr]] as const) {
    for (const c of checks.filter((x) => x.severity === severity)) {
      const details = c.message.trim();
      out.push({ id: faultId(prefix, c.name), delta, message: `${severity} ${c.name} reported by Ceph${details ? `: ${details}` : ''}` });
    }
  }
  return out;
}

/** The failed and no-target rows of one VM. */
function vmFault(vm: VmFact): FaultCondition | undefined {
  const name = vmName(vm);
  const reason = vm.failedReason.trim();
  if (vm.state === 'fail') {
    return { id: faultId('VM_FAILED', name), delta: FAULT_DELTAS.vmFailed, message: `VM ${name} was failed${reason ? `: ${reason}` : ''}` };
  }
  if (vm.state === 'stop' && vm.nodeAutostart && isNoTargetReason(vm.failedReason)) {
    return { id: faultId('VM_NO_TARGET', name), delta: FAULT_DELTAS.vmNoTarget, message: `VM ${name} is stopped, waiting for a recovery target: ${reason}` };
  }
  return undefined;
}

function pluginFaults(n: NodeFact): FaultCondition[] {
  return [...n.plugins]
    .sort((a, b) => cmp(a.name, b.name))
    .filter((p) => p.delta > 0)
    .map((p) => ({
      id: faultId('NODE_PLUGIN', p.name, n.name),
      delta: Math.trunc(p.delta / 2),
      message: `Node ${n.name} plugin ${p.name} reports: ${p.message}`,
    }));
}

/** The N-1 memory check: could the cluster hold every allocation after losing its largest node? */
function memoryFault(nodes: readonly NodeFact[]): FaultCondition | undefined {
  if (nodes.length === 0) return undefined;
  const totals = nodes.map((n) => Math.max(0, n.memTotalMiB));
  const alloc = nodes.reduce((s, n) => s + Math.max(0, n.memAllocMiB), 0);
  const available = totals.reduce((s, t) => s + t, 0) - Math.max(...totals);
  if (alloc <= 0 || alloc < available) return undefined;
  return {
    id: 'MEMORY_OVERPROVISIONED',
    delta: FAULT_DELTAS.memoryOverprovisioned,
    message: `Cluster memory was overprovisioned: ${alloc}MB >= ${available}MB (N-1)`,
  };
}

function vmName(vm: VmFact): string {
  return vm.name.trim() === '' ? vm.uuid : vm.name;
}

function unique(faults: readonly FaultCondition[]): FaultCondition[] {
  const seen = new Set<string>();
  return faults.filter((f) => !seen.has(f.id) && (seen.add(f.id), true));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
