import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createExec, realClock } from '@pvc/runtime';
import type { Exec } from '@pvc/runtime';
import { buildGuestImage, guestDomainXml } from '../../support/guest/index.js';
import type { BuiltGuest } from '../../support/guest/index.js';
import { cephFirstBringUp, createCephCluster } from './ceph.js';
import { ClusterError } from './errors.js';
import { createHost, waitForLibvirtd } from './host.js';
import { prepareHostFiles } from './host-files.js';
import { assertSubnetsFree, createBridges, createHostNetwork } from './network.js';
import { NETWORKS, planCluster } from './plan.js';
import type { ClusterPlan } from './plan.js';
import { assertPrerequisites, findCloudKernel } from './prereqs.js';
import { readClusterOptions, registerCluster, writeClusterState } from './registry.js';
import { BMC_SH, HOST_POWER_SH, runOk } from './run.js';
import { destroyByName, guardCluster, sweepCluster, unguardCluster } from './teardown.js';
import type { Cluster, ClusterOptions, GuestImage, NetworkName } from './types.js';
import { createZkEnsemble } from './zookeeper.js';

/** Injected dependencies (tests of the harness itself may pass a recording Exec). */
export interface ClusterDeps {
  exec?: Exec;
}

async function buildGuest(plan: ClusterPlan, exec: Exec): Promise<BuiltGuest> {
  const kernel = findCloudKernel();
  if (!kernel) throw new ClusterError('CLUSTER_PREREQUISITES', 'no /boot/vmlinuz-*-cloud-amd64 (install linux-image-cloud-amd64)');
  return buildGuestImage({ exec, cacheDir: plan.cacheDir, kernel });
}

function guestImage(plan: ClusterPlan, built: BuiltGuest): GuestImage {
  const consoleLog = (name: string): string => join(plan.workDir, 'consoles', `${name}.log`);
  return {
    kernel: built.kernel,
    initrd: built.initrd,
    kernelVersion: built.kernelVersion,
    net: built.net,
    consoleLog,
    domainXml: (name, o = {}) =>
      guestDomainXml({ ...o, name, kernel: built.kernel, initrd: built.initrd, consoleLog: o.consoleLog ?? consoleLog(name) }),
  };
}

/** Builds the handle over an existing (or just created) cluster; no side effects. */
function assemble(plan: ClusterPlan, exec: Exec, built: BuiltGuest): Cluster {
  const hosts = plan.hosts.map((h) => createHost(plan, h, exec));
  const rootIps = Object.fromEntries(NETWORKS.map((n) => [n, plan.networks[n].rootIp])) as Record<NetworkName, string>;
  return {
    name: plan.name,
    workDir: plan.workDir,
    hosts,
    zk: createZkEnsemble(plan),
    guest: guestImage(plan, built),
    rootIps,
    bareLinks: plan.bareLinks,
    ceph: plan.ceph ? createCephCluster(plan, plan.ceph, exec) : undefined,
    host(name) {
      const h = hosts.find((x) => x.name === name);
      if (!h) throw new ClusterError('CLUSTER_HOST', `no host "${name}" in cluster ${plan.name} (have ${hosts.map((x) => x.name).join(', ')})`);
      return h;
    },
    destroy: () => destroyByName(plan.name, plan.workDir, exec),
  };
}

async function bringUp(plan: ClusterPlan, exec: Exec, log: (l: string) => void): Promise<BuiltGuest> {
  await registerCluster(plan);
  await assertSubnetsFree(plan, exec);
  await mkdir(join(plan.workDir, 'consoles'), { recursive: true });
  const guest = buildGuest(plan, exec);
  guest.catch(() => undefined); // awaited below; avoid an unhandled rejection meanwhile
  await createBridges(plan, exec);
  for (const h of plan.hosts) {
    await createHostNetwork(plan, h, exec);
    await prepareHostFiles(plan, h, exec);
  }
  if (plan.ceph) {
    await cephFirstBringUp(plan, plan.ceph, exec);
    log(`Ceph: conf, monmap and mon mkfs of ${plan.ceph.mons.map((m) => m.name).join(', ')} ready (the supervisor starts the mons; each OSD is created at its first boot)`);
  }
  log(`networks and host files ready (${plan.hosts.length} hosts)`);
  await Promise.all(plan.hosts.map((h) => runOk(exec, 'CLUSTER_BMC', 'bash', [BMC_SH, h.dirs.root, 'start'])));
  log('BMCs (ipmi_sim) listening');
  await Promise.all(plan.hosts.map((h) => runOk(exec, 'HOST_POWER', 'bash', [HOST_POWER_SH, h.dirs.root, 'on'])));
  const built = await guest;
  log(`guest image ${built.cached ? 'from cache' : 'built'}: ${built.initrd}`);
  if (plan.bareLinks) {
    // No cluster address yet: libvirtd answers on its local socket; the Zookeeper quorum forms
    // only after the node services' bring-up (the caller waits for it then).
    log('hosts powered on with bare links; waiting for libvirtd (local socket)');
    await Promise.all(plan.hosts.map((h) => waitForLibvirtd(exec, h, plan.readyTimeoutMs, true)));
    return built;
  }
  log('hosts powered on; waiting for libvirtd and the Zookeeper quorum');
  await Promise.all(plan.hosts.map((h) => waitForLibvirtd(exec, h, plan.readyTimeoutMs)));
  await createZkEnsemble(plan).waitForAllServing();
  return built;
}

/**
 * Creates a cluster of `hosts` simulated hypervisors on this machine (root only): one network
 * namespace per host on four shared bridges, a private mount/UTS/PID namespace per host running its
 * own virtlogd + libvirtd (TCP) and, on coordinators, a Zookeeper server; an ipmi_sim BMC per host
 * whose power commands really kill or boot the host. Leftovers of an earlier run with the same
 * name are swept first. Unless `keepOnExit`, exit/SIGINT/SIGTERM tear the cluster down.
 */
export async function createCluster(opts: ClusterOptions = {}, deps: ClusterDeps = {}): Promise<Cluster> {
  const plan = planCluster(opts);
  assertPrerequisites({ ceph: plan.ceph !== undefined });
  const exec = deps.exec ?? createExec();
  const log = opts.log ?? ((): void => undefined);
  const t0 = realClock.now();
  const swept = await sweepCluster(plan.name, exec);
  if (swept.trim()) log(`swept leftovers of an earlier "${plan.name}" run:\n${swept.trim()}`);
  if (!plan.keepOnExit) guardCluster(plan.name);
  let built: BuiltGuest;
  try {
    built = await bringUp(plan, exec, log);
  } catch (err) {
    if (process.env.PVC_CLUSTER_KEEP_FAILED === '1') {
      log(`bring-up failed; PVC_CLUSTER_KEEP_FAILED=1 leaves "${plan.name}" for inspection (sweep.ts removes it)`);
    } else {
      log(`bring-up failed, sweeping "${plan.name}" (set PVC_CLUSTER_KEEP_FAILED=1 to keep it)`);
      await sweepCluster(plan.name, exec).catch(() => undefined);
    }
    unguardCluster(plan.name);
    throw err;
  }
  const cluster = assemble(plan, exec, built);
  await writeClusterState(cluster);
  log(`cluster "${plan.name}" up in ${((realClock.now() - t0) / 1000).toFixed(1)} s`);
  return cluster;
}

/** Attaches to a cluster created earlier (e.g. by the CLI's "up") from its registry entry. */
export async function openCluster(name: string, deps: ClusterDeps = {}): Promise<Cluster> {
  const plan = planCluster(await readClusterOptions(name));
  const exec = deps.exec ?? createExec();
  return assemble(plan, exec, await buildGuest(plan, exec));
}
