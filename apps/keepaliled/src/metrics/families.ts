/**
 * The metric families keepaliled serves: the original's names (as its samples spell them, which
 * its Grafana dashboards query), help texts and which endpoint carries them — `health`
 * (`/metrics/health`: cluster info, states and counts) or `resource` (`/metrics/resource`:
 * utilization, node, VM, OSD and pool figures); `/metrics` carries both. All are gauges.
 *
 * @module
 */

/** Which split endpoint a family belongs to (as the original's `get_health_metrics` / `get_resource_metrics`). */
export type MetricGroup = 'health' | 'resource';

/** One family: help text and group. */
export interface Family {
  readonly help: string;
  readonly group: MetricGroup;
}

const h = (help: string): Family => ({ help, group: 'health' });
const r = (help: string): Family => ({ help, group: 'resource' });

const vmMem = (stat: string, help: string): [string, Family] => [`pvc_vm_memory_stats_${stat}`, r(help)];
const osd = (f: string, help: string): [string, Family] => [`pvc_ceph_osd_${f}`, r(help)];
const pool = (f: string, help: string): [string, Family] => [`pvc_ceph_pool_${f}`, r(help)];

/** Every family, in the original's output order. */
export const FAMILIES: ReadonlyMap<string, Family> = new Map<string, Family>([
  ['pvc_info', h('PVC cluster information')],
  ['pvc_cluster_maintenance', h('PVC cluster maintenance state')],
  ['pvc_cluster_health', h('PVC cluster health status')],
  ['pvc_cluster_faults', h('PVC cluster new faults')],
  ['pvc_node_health', h('PVC cluster node health status')],
  ['pvc_node_daemon_states', h('PVC Node daemon state counts')],
  ['pvc_node_domain_states', h('PVC Node domain state counts')],
  ['pvc_vm_states', h('PVC VM state counts')],
  ['pvc_ceph_osd_up_states', h('PVC OSD up state counts')],
  ['pvc_ceph_osd_in_states', h('PVC OSD in state counts')],
  ['pvc_nodes', h('PVC Node count')],
  ['pvc_vms', h('PVC VM count')],
  ['pvc_osds', h('PVC OSD count')],
  ['pvc_networks', h('PVC Network count')],
  ['pvc_pools', h('PVC Storage Pool count')],
  ['pvc_volumes', h('PVC Storage Volume count')],
  ['pvc_snapshots', h('PVC Storage Snapshot count')],
  ['pvc_cluster_cpu_utilization', r('PVC cluster CPU utilization percentage (n-1)')],
  ['pvc_cluster_network_utilization', r('PVC cluster network utilization percentage')],
  ['pvc_cluster_memory_real_utilization', r('PVC cluster real memory utilization percentage (n-1)')],
  ['pvc_cluster_memory_allocated_utilization', r('PVC cluster allocated memory utilization percentage (n-1)')],
  ['pvc_cluster_memory_provisioned_utilization', r('PVC cluster provisioned memory utilization percentage (n-1)')],
  ['pvc_cluster_disk_utilization', r('PVC cluster disk utilization percentage (n-2)')],
  ['pvc_node_host_cpus', r('PVC node host CPU count')],
  ['pvc_node_allocated_vcpus', r('PVC node allocated vCPU count')],
  ['pvc_node_load_average', r('PVC node 1 minute load average')],
  ['pvc_node_cpu_utilization', r('PVC node CPU utilization')],
  ['pvc_node_domains_count', r('PVC node running domain count')],
  ['pvc_node_architecture', r('PVC node system architecture')],
  ['pvc_node_kernel', r('PVC node active kernel version')],
  ['pvc_node_network_traffic_rx', r('PVC node received network traffic')],
  ['pvc_node_network_traffic_tx', r('PVC node transmitted network traffic')],
  ['pvc_node_network_packets_rx', r('PVC node received network packets')],
  ['pvc_node_network_packets_tx', r('PVC node transmitted network packets')],
  ['pvc_node_network_utilization', r('PVC node network utilization percentage')],
  ['pvc_node_total_memory', r('PVC node total memory in MB')],
  ['pvc_node_allocated_memory', r('PVC node allocated memory in MB')],
  ['pvc_node_allocated_memory_utilization', r('PVC node allocated memory utilization')],
  ['pvc_node_provisioned_memory', r('PVC node provisioned memory in MB')],
  ['pvc_node_provisioned_memory_utilization', r('PVC node provisioned memory utilization')],
  ['pvc_node_used_memory', r('PVC node used memory in MB')],
  ['pvc_node_used_memory_utilization', r('PVC node used memory utilization')],
  ['pvc_node_free_memory', r('PVC node free memory in MB')],
  ['pvc_vm_uuid', r('PVC VM UUID')],
  ['pvc_vm_description', r('PVC VM description')],
  ['pvc_vm_profile', r('PVC VM profile')],
  ['pvc_vm_state', r('PVC VM state')],
  ['pvc_vm_failed_reason', r('PVC VM failed_reason')],
  ['pvc_vm_node_limit', r('PVC VM node_limit')],
  ['pvc_vm_node_selector', r('PVC VM node_selector')],
  ['pvc_vm_autostart', r('PVC VM node_autostart')],
  ['pvc_vm_migration_method', r('PVC VM migration_method')],
  ['pvc_vm_tags', r('PVC VM tags')],
  ['pvc_vm_active_node', r('PVC VM active node')],
  ['pvc_vm_migrated', r('PVC VM migrated state')],
  ['pvc_vm_machine_type', r('PVC VM machine type')],
  ['pvc_vm_vcpus', r('PVC VM provisioned vCPUs')],
  ['pvc_vm_vcpu_topology', r('PVC VM vCPU topology')],
  ['pvc_vm_vcpus_cpu_time', r('PVC VM vCPU CPU time milliseconds')],
  ['pvc_vm_vcpus_user_time', r('PVC VM vCPU User time milliseconds')],
  ['pvc_vm_vcpus_system_time', r('PVC VM vCPU System time milliseconds')],
  ['pvc_vm_memory', r('PVC VM provisioned memory MB')],
  vmMem('actual', 'PVC VM actual memory allocation KB'),
  vmMem('rss', 'PVC VM RSS memory KB'),
  vmMem('unused', 'PVC VM unused memory KB'),
  vmMem('available', 'PVC VM available memory KB'),
  vmMem('usable', 'PVC VM usable memory KB'),
  vmMem('disk_caches', 'PVC VM disk cache memory KB'),
  vmMem('swap_in', 'PVC VM memory swap in'),
  vmMem('swap_out', 'PVC VM memory swap out'),
  vmMem('major_fault', 'PVC VM memory major faults'),
  vmMem('minor_fault', 'PVC VM memory minor faults'),
  vmMem('hugetlb_pgalloc', 'PVC VM memory huge table allocations'),
  vmMem('hugetlb_pgfail', 'PVC VM memory huge table failures'),
  ['pvc_vm_network_macaddr', r('PVC VM network MAC address')],
  ['pvc_vm_network_model', r('PVC VM network device model')],
  ['pvc_vm_network_rd_packets', r('PVC VM network packets read')],
  ['pvc_vm_network_rd_bits', r('PVC VM network bits read')],
  ['pvc_vm_network_rd_errors', r('PVC VM network read errors')],
  ['pvc_vm_network_rd_drops', r('PVC VM network read drops')],
  ['pvc_vm_network_wr_packets', r('PVC VM network packets write')],
  ['pvc_vm_network_wr_bits', r('PVC VM network bits write')],
  ['pvc_vm_network_wr_errors', r('PVC VM network write errors')],
  ['pvc_vm_network_wr_drops', r('PVC VM network write drops')],
  ['pvc_vm_disk_rd_req', r('PVC VM disk read requests')],
  ['pvc_vm_disk_rd_bytes', r('PVC VM disk bytes read')],
  ['pvc_vm_disk_wr_req', r('PVC VM disk write requests')],
  ['pvc_vm_disk_wr_bytes', r('PVC VM disk bytes write')],
  osd('device', 'PVC OSD device (host + blockdev)'),
  osd('db_device', 'PVC OSD database device'),
  osd('device_class', 'PVC OSD device class'),
  osd('util', 'PVC OSD utilization percentage'),
  osd('var', 'PVC OSD utilization variability'),
  osd('pgs', 'PVC OSD placement groups'),
  osd('size', 'PVC OSD size KB'),
  osd('used', 'PVC OSD used bytes'),
  osd('used_data', 'PVC OSD used (data) bytes'),
  osd('used_omap', 'PVC OSD used (omap) bytes'),
  osd('used_meta', 'PVC OSD used (meta) bytes'),
  osd('avail', 'PVC OSD available bytes'),
  osd('weight', 'PVC OSD weight'),
  osd('reweight', 'PVC OSD reweight'),
  osd('wr_ops', 'PVC OSD write operations per second'),
  osd('wr_data', 'PVC OSD write bytes per second'),
  osd('rd_ops', 'PVC OSD read operations per second'),
  osd('rd_data', 'PVC OSD read bytes per second'),
  pool('tier', 'PVC Pool tier'),
  pool('pgs', 'PVC Pool placement groups'),
  pool('volumes', 'PVC Pool volumes count'),
  pool('stored_bytes', 'PVC Pool stored bytes'),
  pool('free_bytes', 'PVC Pool free bytes'),
  pool('used_bytes', 'PVC Pool used bytes'),
  pool('used_percent', 'PVC Pool used percent'),
  pool('num_objects', 'PVC Pool total objects'),
  pool('num_objects_clones', 'PVC Pool clone objects'),
  pool('num_objects_copies', 'PVC Pool object copies'),
  pool('num_objects_missing_on_primary', 'PVC Pool objects missing on primary'),
  pool('num_objects_unfound', 'PVC Pool objects unfound'),
  pool('num_objects_degraded', 'PVC Pool objects degraded'),
  pool('read_ops', 'PVC Pool read operations lifetime'),
  pool('read_bytes', 'PVC Pool read bytes lifetime'),
  pool('write_ops', 'PVC Pool write operations lifetime'),
  pool('write_bytes', 'PVC Pool write bytes lifetime'),
]);

/** Labels of one sample. */
export type Labels = Readonly<Record<string, string>>;

/** One sample of a family. */
export interface Sample {
  readonly name: string;
  readonly labels: Labels;
  readonly value: number;
}

/**
 * Collects samples; a value that is undefined or not finite is dropped (a metric whose input is
 * unknown has no sample rather than a made-up one). Unknown family names are a programming error.
 */
export class Samples {
  readonly list: Sample[] = [];

  add(name: string, labels: Labels, value: number | undefined): void {
    if (!FAMILIES.has(name)) throw new Error(`internal: unknown metric family ${name}`);
    if (value === undefined || !Number.isFinite(value)) return;
    this.list.push({ name, labels, value });
  }
}

/** Rounds like the original's `{x:2.2f}` (two decimals). */
export function twoDp(x: number | undefined): number | undefined {
  return x === undefined ? undefined : Math.round(x * 100) / 100;
}
