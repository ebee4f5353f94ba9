import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import type { Exec, ExecOptions, ExecResult } from '@pvc/runtime';
import { clusterCephConf } from './ceph-plan.js';
import type { CephPlan } from './ceph-plan.js';
import { serviceScript, shq } from './configs.js';
import { ClusterError } from './errors.js';
import { writeService } from './host-files.js';
import type { ClusterPlan, HostPlan } from './plan.js';
import { runOk, SH_DIR, waitFor } from './run.js';

/** Start order of the OSD's boot service: after Zookeeper (30), before services added by tests (50). */
const OSD_SERVICE_ORDER = 40;

/** The host's `systemctl` (the shim), given to the supervisor as `--systemctl`. */
export function systemctlShimPath(host: { readonly dirs: { readonly root: string } }): string {
  return join(host.dirs.root, 'bin', 'systemctl');
}

/**
 * Writes the host's `bin/systemctl`: sh/systemctl-shim.sh bound to this host's directory. Every host
 * gets one; the supervisor uses it only when started with `--systemctl` (clusters with Ceph).
 */
export async function writeSystemctlShim(host: HostPlan): Promise<void> {
  await mkdir(join(host.dirs.root, 'bin'), { recursive: true });
  await mkdir(join(host.dirs.root, 'units'), { recursive: true });
  const file = systemctlShimPath(host);
  await writeFile(file, `#!/bin/sh\n# systemctl of ${host.name} (tests/cluster/harness/sh/systemctl-shim.sh)\nexec bash ${shq(join(SH_DIR, 'systemctl-shim.sh'))} ${shq(host.dirs.root)} "$@"\n`);
  await chmod(file, 0o755);
}

/** A unit the shim starts on request only (`<hostdir>/units/<name>.sh`): not at boot. */
async function writeUnit(host: HostPlan, name: string, command: string, args: readonly string[]): Promise<void> {
  const file = join(host.dirs.root, 'units', `${name}.sh`);
  await writeFile(file, serviceScript(host, name, command, args).replace('started by host-power.sh at every power-on', 'started by the systemctl shim when the supervisor asks'));
  await chmod(file, 0o755);
}

/**
 * One host's Ceph files: its own /var/lib/ceph, /var/log/ceph, /run/ceph (mounted by host-init.sh),
 * on coordinators the units `ceph-mon@<host>` and `ceph-mgr@<host>` the supervisor starts through
 * the shim, and the OSD as a boot service (sh/ceph-osd.sh).
 */
export async function prepareCephHostFiles(c: CephPlan, host: HostPlan): Promise<void> {
  for (const d of [host.dirs.varLibCeph, host.dirs.varLogCeph, host.dirs.runCeph]) await mkdir(d, { recursive: true });
  for (const sub of ['mon', 'mgr', 'osd', 'tmp', 'crash']) await mkdir(join(host.dirs.varLibCeph, sub), { recursive: true });
  if (c.mons.some((m) => m.host === host.name)) {
    await writeUnit(host, `ceph-mon-${host.name}`, 'ceph-mon', ['-f', '-i', host.name]);
  }
  if (c.mgrs.some((m) => m.host === host.name)) {
    await mkdir(join(host.dirs.varLibCeph, 'mgr', `ceph-${host.name}`), { recursive: true });
    await writeUnit(host, `ceph-mgr-${host.name}`, 'ceph-mgr', ['-f', '-i', host.name]);
  }
  const osd = c.osds.find((o) => o.host === host.name);
  if (osd) {
    await writeService(host, OSD_SERVICE_ORDER, { name: `ceph-osd-${osd.id}`, command: 'bash', args: [join(SH_DIR, 'ceph-osd.sh'), String(osd.id), osd.uuid, osd.ip] });
  }
}

/**
 * The first bring-up, before any host is powered on: ceph.conf, a monmap of every coordinator's
 * mon, and `ceph-mon --mkfs` of each into its host's /var/lib/ceph (files only; the supervisor
 * starts the mons). OSDs are created at their first boot (sh/ceph-osd.sh), once the mons run.
 */
export async function cephFirstBringUp(plan: ClusterPlan, c: CephPlan, exec: Exec): Promise<void> {
  await rm(c.dir, { recursive: true, force: true });
  await mkdir(c.etcDir, { recursive: true });
  await writeFile(c.confPath, clusterCephConf(c));
  const monmap = join(c.dir, 'monmap');
  const addv = c.mons.flatMap((m) => ['--addv', m.name, `[v2:${m.ip}:3300,v1:${m.ip}:6789]`]);
  await runOk(exec, 'CLUSTER_CEPH', 'monmaptool', ['--create', '--clobber', '--fsid', c.fsid, ...addv, monmap]);
  for (const m of c.mons) {
    const host = plan.hosts.find((h) => h.name === m.host)!;
    const data = join(host.dirs.varLibCeph, 'mon', `ceph-${m.name}`);
    await mkdir(data, { recursive: true });
    await runOk(exec, 'CLUSTER_CEPH', 'ceph-mon', [
      '-c', c.confPath, '--mkfs', '-i', m.name, '--monmap', monmap, '--mon-data', data,
      '--log-file', join(host.dirs.varLogCeph, `mkfs-mon.${m.name}.log`), '--run-dir', host.dirs.runCeph, '--admin-socket', '',
    ]);
  }
}

/** `ceph osd dump` entry of one OSD. */
interface OsdDumpEntry {
  osd: number;
  up: number;
  in: number;
}

/** The handle of a cluster's Ceph; every command runs from the root namespace over the storage bridge. */
export interface CephCluster {
  readonly fsid: string;
  /** The RBD pool (`vms`), created by {@link CephCluster.waitReady}. */
  readonly pool: string;
  readonly size: number;
  readonly minSize: number;
  /** ceph.conf as seen from the root namespace; every host sees it as /etc/ceph/ceph.conf. */
  readonly confPath: string;
  /** Mons (id = host name) on the hosts' storage addresses. */
  readonly mons: readonly { name: string; host: string; address: string }[];
  /** mgr ids (= host names). */
  readonly mgrs: readonly string[];
  readonly osds: readonly { id: number; host: string; address: string }[];
  /** The OSD id of a host. */
  osdOf(host: string): number;
  /** `ceph -c <confPath> --connect-timeout 10 <args>` from the root namespace. */
  ceph(args: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /** Like {@link ceph} with `--format json`; throws naming the command when it fails. */
  cephJson<T>(args: readonly string[], opts?: ExecOptions): Promise<T>;
  /**
   * Waits (bounded) for every mon in quorum, every OSD up and in, an active mgr; creates the pool
   * if missing (`size`/`min_size`, `rbd pool init`); waits for every PG active+clean and
   * HEALTH_OK. Returns the ms it waited.
   */
  waitReady(timeoutMs?: number): Promise<number>;
  /** Waits until `ceph osd dump` shows the OSD up (or down); returns the ms it waited. */
  waitOsd(id: number, state: 'up' | 'down', timeoutMs?: number): Promise<number>;
  /** `ceph health` status and check names. */
  health(): Promise<{ status: string; checks: string[] }>;
}

/** Builds the handle (no side effects). */
export function createCephCluster(plan: ClusterPlan, c: CephPlan, exec: Exec): CephCluster {
  const clientLog = join(c.dir, 'client-root.log');
  const ceph = (args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> =>
    exec.run('ceph', ['-c', c.confPath, '--connect-timeout', '10', '--log-file', clientLog, ...args], { timeoutMs: 30_000, ...opts });
  const cephJson = async <T>(args: readonly string[], opts: ExecOptions = {}): Promise<T> => {
    const r = await ceph([...args, '--format', 'json'], opts);
    if (r.exitCode !== 0) throw new ClusterError('CLUSTER_CEPH', `ceph ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return JSON.parse(r.stdout) as T;
  };
  const must = async (args: readonly string[]): Promise<void> => {
    const r = await ceph(args);
    if (r.exitCode !== 0) throw new ClusterError('CLUSTER_CEPH', `ceph ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim()}`);
  };
  const osds = (): Promise<OsdDumpEntry[]> => cephJson<{ osds: OsdDumpEntry[] }>(['osd', 'dump']).then((d) => d.osds);
  const health = async (): Promise<{ status: string; checks: string[] }> => {
    const h = await cephJson<{ status: string; checks?: Record<string, unknown> }>(['health']);
    return { status: h.status, checks: Object.keys(h.checks ?? {}) };
  };
  const handle: CephCluster = {
    fsid: c.fsid,
    pool: c.pool,
    size: c.size,
    minSize: c.minSize,
    confPath: c.confPath,
    mons: c.mons.map((m) => ({ name: m.name, host: m.host, address: m.ip })),
    mgrs: c.mgrs.map((m) => m.name),
    osds: c.osds.map((o) => ({ id: o.id, host: o.host, address: o.ip })),
    osdOf(host) {
      const o = c.osds.find((x) => x.host === host);
      if (!o) throw new ClusterError('CLUSTER_CEPH', `no OSD on host "${host}"`);
      return o.id;
    },
    ceph,
    cephJson,
    health,
    async waitReady(timeoutMs = plan.readyTimeoutMs) {
      const t0 = realClock.now();
      const left = (): number => Math.max(1_000, timeoutMs - (realClock.now() - t0));
      await waitFor(`every Ceph mon in quorum (${c.mons.map((m) => m.name).join(', ')}; the node services' supervisor starts them)`, left(), async () => {
        const q = await cephJson<{ quorum_names: string[] }>(['quorum_status']);
        if (q.quorum_names.length === c.mons.length) return true;
        throw new Error(`quorum ${q.quorum_names.join(',')}`);
      }, 500);
      await waitFor(`every OSD up and in (${c.osds.length})`, left(), async () => {
        const all = await osds();
        if (all.length === c.osds.length && all.every((o) => o.up === 1 && o.in === 1)) return true;
        throw new Error(all.map((o) => `osd.${o.osd} up=${o.up} in=${o.in}`).join(' ') || 'no OSD yet');
      }, 500);
      await waitFor('an active mgr', left(), async () => ((await cephJson<{ available: boolean }>(['mgr', 'stat'])).available ? true : undefined), 500);
      const pools = await cephJson<string[]>(['osd', 'pool', 'ls']);
      if (!pools.includes(c.pool)) {
        await must(['osd', 'pool', 'create', c.pool, String(c.pgs), String(c.pgs), 'replicated']);
        await must(['osd', 'pool', 'set', c.pool, 'size', String(c.size)]);
        await must(['osd', 'pool', 'set', c.pool, 'min_size', String(c.minSize)]);
        const init = await exec.run('rbd', ['-c', c.confPath, '--log-file', clientLog, 'pool', 'init', c.pool], { timeoutMs: left() });
        if (init.exitCode !== 0) throw new ClusterError('CLUSTER_CEPH', `rbd pool init ${c.pool} exited ${init.exitCode}: ${init.stderr.trim()}`);
      }
      await waitFor('HEALTH_OK with every PG active+clean', left(), async () => {
        const h = await health();
        if (h.status === 'HEALTH_OK') return true;
        throw new Error(`${h.status} ${h.checks.join(',')}`);
      }, 500);
      return realClock.now() - t0;
    },
    async waitOsd(id, state, timeoutMs = 60_000) {
      const t0 = realClock.now();
      await waitFor(`osd.${id} ${state} in the osd map`, timeoutMs, async () => {
        const o = (await osds()).find((x) => x.osd === id);
        return o && (o.up === 1) === (state === 'up') ? true : undefined;
      }, 100);
      return realClock.now() - t0;
    },
  };
  return handle;
}
