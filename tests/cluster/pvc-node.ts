/**
 * Running the real PVC node services (supervisor → netd, vmd, cephd, keepaliled) on harness hosts:
 * a per-host config, the Zookeeper tree a `pvc cluster init` would write (that command comes
 * later), and the supervisor as a boot-time host service so it comes back after an IPMI power-on.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeTestConfig, DELETE } from '@pvc/config/testing';
import { paths, type ZkClient } from '@pvc/zk';
import { shq } from './harness/configs.js';
import { ipmitoolArgs, systemctlShimPath, waitFor } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import type { FloatingAddressWatch } from './cluster-watch.js';

const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
/** Services the supervisor spawns (standalone mode), plus itself. */
export const NODE_SERVICES = ['supervisor', 'netd', 'vmd', 'cephd', 'keepaliled'] as const;

/** Fencing and timing settings of one test cluster. */
export interface PvcNodeSettings {
  keepaliveInterval: number;
  fenceIntervals: number;
  successfulFence?: 'migrate' | 'none';
  /** Health plugin period, s (default 15, the original's). */
  monitoringInterval?: number;
  vmShutdownTimeout?: number;
  /**
   * `suicide_intervals` (default 0: off). When on, the suicide command resets the host through its
   * own BMC and first appends a line to {@link suicideMarker}; the peer check is on (default port).
   */
  suicideIntervals?: number;
  /** keepaliled's metrics port (`system.metrics.port`), served on the host's cluster address; default 0 (off). */
  metricsPort?: number;
  /**
   * `coordinator.dns.database` and `coordinator.metadata.database` of every node (the DNS
   * aggregator's and the metadata API's PostgreSQL, e.g. a PgTestServer listening on the root
   * namespace's cluster address). Default: with bare links the sample's (`localhost:5432`, which
   * nothing serves in a host's namespace: the aggregator and the user-data then only log that the
   * database is down); without, none (networking is off, the section is dropped).
   */
  coordinatorDatabases?: CoordinatorDatabases;
}

/** One coordinator database of the node config (`coordinator.<dns|metadata>.database`). */
export interface CoordinatorDatabase {
  host: string;
  port: number;
  name: string;
  user: string;
  pass: string;
}

/** Both coordinator databases (see {@link PvcNodeSettings.coordinatorDatabases}). */
export interface CoordinatorDatabases {
  dns: CoordinatorDatabase;
  metadata: CoordinatorDatabase;
}

/** The config edits that set both coordinator databases. */
function coordinatorDatabaseEdits(dbs: CoordinatorDatabases): [string, unknown][] {
  return (['dns', 'metadata'] as const).flatMap((which) =>
    Object.entries(dbs[which]).map(([k, v]): [string, unknown] => [`pvc.coordinator.${which}.database.${k}`, v]));
}

/** Where one host's node services keep their files (inside the host's own directory). */
export function pvcDirs(host: ClusterHost): { root: string; run: string; log: string; console: string; config: string } {
  const root = join(host.dirs.root, 'pvc');
  return { root, run: join(root, 'run'), log: join(root, 'log'), console: join(root, 'console'), config: join(root, 'pvcnoded.yaml') };
}

/**
 * How to run the services: the built `dist` of every app (faster start, less memory) — required;
 * `scripts/setup.sh` builds it. Throws naming what is missing.
 */
export function supervisorCommand(): { command: string; args: string[] } {
  const missing = NODE_SERVICES.map((s) => join(ROOT, 'apps', s, 'dist', 'main.js')).filter((f) => !existsSync(f));
  if (missing.length > 0) {
    throw new Error(`the node services are not built (missing ${missing.join(', ')}): run \`npx tsc -b ${NODE_SERVICES.map((s) => `apps/${s}`).join(' ')}\` (scripts/setup.sh builds everything)`);
  }
  return { command: process.execPath, args: [join(ROOT, 'apps/supervisor/dist/main.js')] };
}

/** Source files newer than the newest file of an app's dist (a stale build runs old code): for a warning. */
export function staleBuilds(): string[] {
  const newest = (dir: string, ext: RegExp): number => {
    let t = 0;
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (ext.test(e.name) && !e.name.endsWith('.spec.ts')) t = Math.max(t, statSync(p).mtimeMs);
      }
    };
    if (existsSync(dir)) walk(dir);
    return t;
  };
  const pkgs = [...NODE_SERVICES.map((s) => `apps/${s}`), ...readdirSync(join(ROOT, 'libs')).map((l) => `libs/${l}`)];
  return pkgs.filter((p) => newest(join(ROOT, p, 'src'), /\.ts$/) > newest(join(ROOT, p, 'dist'), /\.js$/) + 1000);
}

/**
 * The file the suicide command appends one line to (`<epoch ms> <host> suicide`) before it resets
 * the host: a test sees that the suicide fired, and when, even though the reset kills the services.
 */
export function suicideMarker(host: ClusterHost): string {
  return join(pvcDirs(host).root, 'suicide.log');
}

/** A script that resets this host through its own BMC: the suicide command (never sysrq on this machine). */
function writeSuicideScript(host: ClusterHost): string {
  const file = join(pvcDirs(host).root, 'suicide.sh');
  const ipmi = ipmitoolArgs(host.ipmi, ['chassis', 'power', 'reset']).map(shq).join(' ');
  writeFileSync(file, `#!/bin/sh\necho "$(date +%s%3N) ${host.name} suicide" >>${shq(suicideMarker(host))}\nexec ipmitool ${ipmi}\n`, { mode: 0o700 });
  chmodSync(file, 0o700);
  return file;
}

/** The networks whose node addresses, bridges and floating addresses the node services manage. */
export const NODE_NETWORKS = ['cluster', 'storage', 'upstream'] as const;
export type NodeNetwork = (typeof NODE_NETWORKS)[number];

/**
 * Host number of the floating addresses in each harness /24: hosts are .1–.9, the root namespace
 * (every bridge, and the upstream gateway) .254, so .250 is nobody's.
 */
export const FLOATING_HOST_OCTET = 250;

/** `cluster.networks.<net>.floating_ip` of every node of `cluster` (bare address, no prefix). */
export function floatingAddresses(cluster: Cluster): Record<NodeNetwork, string> {
  const of = (net: NodeNetwork): string => cluster.rootIps[net].replace(/\.\d+$/, `.${FLOATING_HOST_OCTET}`);
  return { cluster: of('cluster'), storage: of('storage'), upstream: of('upstream') };
}

/**
 * The networking part of a node config, for a cluster with bare links: the devices are the
 * harness's links (`cluster`, `storage`, `upstream`), one bridge each (brcluster…), node addresses
 * `by-id` (host hvN is .N in every /24: exactly the harness plan), the floating addresses
 * ({@link floatingAddresses}) and the upstream gateway = the root namespace's address on the
 * upstream bridge (the "world" of the harness), so bring-up also makes the default route.
 */
function networkingEdits(cluster: Cluster): [string, unknown][] {
  const floating = floatingAddresses(cluster);
  const edits: [string, unknown][] = [['pvc.functions.enable_networking', true]];
  for (const net of NODE_NETWORKS) {
    const prefix = cluster.rootIps[net].replace(/\.\d+$/, '');
    edits.push(
      [`pvc.cluster.networks.${net}.domain`, `${net}.${cluster.name}.pvc`],
      [`pvc.cluster.networks.${net}.network`, `${prefix}.0/24`],
      [`pvc.cluster.networks.${net}.floating_ip`, `${floating[net]}/24`],
      [`pvc.system.configuration.networking.${net}.device`, net],
      [`pvc.system.configuration.networking.${net}.mtu`, 1500],
      [`pvc.system.configuration.networking.${net}.address`, 'by-id'],
    );
  }
  edits.push(
    ['pvc.cluster.networks.upstream.gateway', cluster.rootIps.upstream],
    // No SR-IOV and no bridge_device here (no such devices; hostnet does not do them yet).
    ['pvc.system.configuration.networking.sriov_enable', false],
    ['pvc.system.configuration.networking.sriov_device', DELETE],
    ['pvc.system.configuration.networking.bridge_device', DELETE],
    ['pvc.system.configuration.networking.bridge_mtu', DELETE],
  );
  return edits;
}

/**
 * Where the stand-ins for the coordinator services the harness does not run live: with networking
 * on, the supervisor waits (`--external-services`) for FRR (`vtysh -c 'show version'`) and, with
 * the coordinator databases configured (required with networking), PostgreSQL (`pg_isready`).
 * Neither runs in a host (FRR is not installed; a scenario that needs the databases gives a
 * PostgreSQL elsewhere, {@link PvcNodeSettings.coordinatorDatabases}), so two scripts that answer
 * "ready" come first on the supervisor's PATH — otherwise every boot would wait out
 * `--service-timeout`.
 */
function writeStandIns(host: ClusterHost): string {
  const dir = join(pvcDirs(host).root, 'stand-ins');
  mkdirSync(dir, { recursive: true });
  const script = (what: string, out: string): string =>
    `#!/bin/sh\n# Stand-in for ${what}, written by tests/cluster/pvc-node.ts: the harness does not run it.\necho "${out}"\n`;
  writeFileSync(join(dir, 'vtysh'), script("FRR's vtysh", 'FRRouting (stand-in of the test cluster; FRR does not run here)'), { mode: 0o755 });
  writeFileSync(join(dir, 'pg_isready'), script('PostgreSQL (pg_isready)', '$*: accepting connections (stand-in of the test cluster)'), { mode: 0o755 });
  return dir;
}

/**
 * Writes the node config of `host` (see the module doc) and returns its path. On a cluster with
 * bare links networking is on ({@link networkingEdits}): the supervisor's bring-up configures the
 * host's interfaces and netd puts the floating addresses on the primary. On a cluster whose hosts
 * got their addresses from the harness (the demo's), networking stays off: bring-up must not
 * build bridges over links that already carry the node's addresses.
 */
export function writePvcConfig(cluster: Cluster, host: ClusterHost, s: PvcNodeSettings): string {
  const d = pvcDirs(host);
  for (const dir of [d.root, d.run, d.log, d.console]) mkdirSync(dir, { recursive: true });
  const coordinators = cluster.hosts.filter((h) => h.coordinator).map((h) => h.name);
  const pluginDir = join(ROOT, 'apps/keepaliled/dist/health/plugins');
  const networking: [string, unknown][] = cluster.bareLinks
    ? networkingEdits(cluster)
    : [
        ['pvc.functions.enable_networking', false], // the harness configured the interfaces itself
        ['pvc.coordinator', DELETE], // no coordinator databases unless the scenario gives them (below)
      ];
  if (s.coordinatorDatabases) networking.push(...coordinatorDatabaseEdits(s.coordinatorDatabases));
  const cfg = writeTestConfig(
    d.root,
    ['pvc.node', host.name],
    ['pvc.debug', process.env.PVC_NODE_DEBUG === '1'], // debug logs of every service when set
    ...networking,
    // With the cluster's Ceph: the supervisor starts mon/mgr on coordinators; cephd serves storage.
    ['pvc.functions.enable_storage', cluster.ceph !== undefined],
    ['pvc.functions.enable_api', false],
    ['pvc.cluster.coordinators', coordinators],
    ['pvc.database.zookeeper.port', cluster.zk.servers[0]!.clientPort],
    ['pvc.system.fencing.intervals.keepalive_interval', s.keepaliveInterval],
    ['pvc.system.fencing.intervals.fence_intervals', s.fenceIntervals],
    ['pvc.system.fencing.intervals.suicide_intervals', s.suicideIntervals ?? 0],
    ['pvc.system.fencing.actions.successful_fence', s.successfulFence ?? 'migrate'],
    ['pvc.system.fencing.actions.failed_fence', 'None'],
    ['pvc.system.fencing.ipmi.host', host.ipmi.host],
    ['pvc.system.fencing.ipmi.user', host.ipmi.user],
    ['pvc.system.fencing.ipmi.pass', host.ipmi.pass],
    ['pvc.system.fencing.ipmi.port', host.ipmi.port],
    ['pvc.system.fencing.suicide_command', writeSuicideScript(host)],
    ['pvc.system.migration.target_selector', 'mem'],
    ['pvc.system.configuration.directories.plugin_directory', existsSync(pluginDir) ? pluginDir : join(ROOT, 'apps/keepaliled/src/health/plugins')],
    ['pvc.system.configuration.directories.dynamic_directory', d.run],
    ['pvc.system.configuration.directories.log_directory', d.log],
    ['pvc.system.configuration.directories.console_log_directory', d.console],
    ['pvc.system.configuration.logging.file_logging', true],
    ['pvc.system.configuration.logging.stdout_logging', false],
    ['pvc.system.configuration.logging.log_colours', false],
    ['pvc.system.configuration.logging.log_keepalive_plugin_details', false],
    ['pvc.system.configuration.monitoring_interval', s.monitoringInterval ?? 15],
    ['pvc.system.configuration.hypervisor.domain_type', 'qemu'],
    ['pvc.system.configuration.hypervisor.libvirt_uri', host.libvirtUri],
    ['pvc.system.configuration.hypervisor.vm_shutdown_timeout', s.vmShutdownTimeout ?? 3],
    // On the cluster address (not the default 127.0.0.1 inside the host's namespace) so a
    // Prometheus in the root namespace can scrape every host.
    ['pvc.system.metrics.listen_address', host.clusterIp],
    ['pvc.system.metrics.port', s.metricsPort ?? 0],
  );
  chmodSync(cfg, 0o600);
  return cfg;
}

/** Options of {@link startPvc}. */
export interface StartPvcOptions {
  /**
   * How the supervisor's coordinator-service step treats Zookeeper, libvirtd, Ceph mon/mgr, FRR and
   * PostgreSQL: `external` (default; `--external-services`: the harness runs ZK and libvirtd, the
   * supervisor only probes) or `shim` (`--systemctl <hostdir>/bin/systemctl`: it runs
   * `systemctl start <unit>` for each as on a real node, and the host's shim starts the Ceph mon/mgr
   * units, answers ZK/libvirtd as running and FRR/PostgreSQL as stand-ins). Clusters with Ceph need `shim`.
   */
  services?: 'external' | 'shim';
}

/** Units the test cluster does not run: the shim answers `start` for them with success (see writeStandIns). */
function writeStandInUnits(host: ClusterHost): void {
  const units = join(host.dirs.root, 'units');
  mkdirSync(units, { recursive: true });
  writeFileSync(join(units, 'frr.stand-in'), 'FRR is not installed here; vtysh is a stand-in\n');
  writeFileSync(join(units, 'patroni.stand-in'), 'PostgreSQL does not run here; pg_isready is a stand-in\n');
}

/**
 * Starts the supervisor (standalone: it spawns netd, vmd, cephd, keepaliled) on `host` now and at
 * every power-on, like an enabled unit. See {@link StartPvcOptions} for the coordinator services.
 */
export async function startPvc(host: ClusterHost, configPath: string, opts: StartPvcOptions = {}): Promise<void> {
  const { command, args } = supervisorCommand();
  const path = `${writeStandIns(host)}:${process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'}`;
  if (opts.services === 'shim') writeStandInUnits(host);
  const services = opts.services === 'shim' ? ['--systemctl', systemctlShimPath(host)] : ['--external-services'];
  await host.startService({
    name: 'pvc',
    command: 'bash',
    args: ['-c', 'cd "$1" && shift && exec "$@"', 'pvc', ROOT, command, ...args, '--config', configPath, ...services, '--service-timeout', '30'],
    env: { PATH: path },
    onBoot: true,
  });
}

/** Waits until every named node's daemon state is `run`. */
export async function waitNodesRun(zk: ZkClient, names: readonly string[], timeoutMs: number): Promise<void> {
  await waitFor(`daemonstate run on ${names.join(', ')}`, timeoutMs, async () => {
    const states = await Promise.all(names.map(async (n) => `${n}=${(await zk.read(paths.node(n).daemonState)) ?? 'absent'}`));
    if (states.every((s) => s.endsWith('=run'))) return true;
    throw new Error(states.join(' '));
  }, 200);
}

/** The elected primary (`/config/primary_node`), once there is one. */
export async function waitPrimary(zk: ZkClient, timeoutMs: number): Promise<string> {
  return waitFor('a primary node', timeoutMs, async () => {
    const p = await zk.read(paths.config.primaryNode);
    return p && p !== 'none' ? p : undefined;
  }, 200);
}


/**
 * Waits until the primary (`/config/primary_node`, read again each round) holds every floating
 * address — on the bridge of its network — and no other host holds any (fresh reads of every
 * host's addresses). Returns the primary. The error names who held what.
 */
export async function waitFloatingOnPrimary(zk: ZkClient, floating: Pick<FloatingAddressWatch, 'holders' | 'floating'>, timeoutMs: number): Promise<string> {
  return waitFor('the floating addresses on the primary only', timeoutMs, async () => {
    const primary = (await zk.read(paths.config.primaryNode)) ?? 'none';
    const holders = await floating.holders();
    const wrong = [...holders].filter(([, hs]) => hs.length !== 1 || !hs[0]!.startsWith(`${primary}/br`));
    if (primary !== 'none' && wrong.length === 0) return primary;
    throw new Error(`primary ${primary}; ${[...holders].map(([ip, hs]) => `${ip} on [${hs.join(', ')}]`).join('; ')}`);
  }, 200);
}
