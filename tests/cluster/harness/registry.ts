import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClusterError } from './errors.js';
import type { ClusterPlan } from './plan.js';
import type { Cluster, ClusterOptions } from './types.js';

/**
 * Where running clusters are recorded: /run/pvc-cluster/<name>/{workdir,options.json,state.json}.
 * The sweeper reads `workdir`; the CLI's down/status read `options.json`; `state.json` is for people.
 */
export const REGISTRY_DIR = '/run/pvc-cluster';
/** File in the work dir naming the cluster that owns it; the sweeper deletes only marked dirs. */
export const WORKDIR_MARKER = '.pvc-cluster';

function entry(name: string): string {
  return join(REGISTRY_DIR, name);
}

/** Records the cluster before anything is created, so a crash at any later step can be swept. */
export async function registerCluster(plan: ClusterPlan): Promise<void> {
  await mkdir(entry(plan.name), { recursive: true });
  await writeFile(join(entry(plan.name), 'workdir'), `${plan.workDir}\n`);
  await writeFile(join(entry(plan.name), 'options.json'), `${JSON.stringify(plan.options, null, 2)}\n`);
  await mkdir(plan.workDir, { recursive: true });
  await writeFile(join(plan.workDir, WORKDIR_MARKER), plan.name);
}

/** The options a registered cluster was created with; throws when it is not registered. */
export async function readClusterOptions(name: string): Promise<ClusterOptions> {
  try {
    return JSON.parse(await readFile(join(entry(name), 'options.json'), 'utf8')) as ClusterOptions;
  } catch (err) {
    throw new ClusterError('CLUSTER_NOT_FOUND', `no cluster "${name}" is registered in ${REGISTRY_DIR} (is it up?)`, err);
  }
}

/** Names of every registered cluster. */
export async function registeredClusters(): Promise<string[]> {
  const names = await readdir(REGISTRY_DIR).catch(() => [] as string[]);
  return names.sort();
}

/** A JSON description of a running cluster (addresses, URIs, credentials, paths). */
export function describeCluster(c: Cluster): Record<string, unknown> {
  return {
    name: c.name,
    workDir: c.workDir,
    rootIps: c.rootIps,
    zookeeper: c.zk.connectString,
    guest: { kernel: c.guest.kernel, initrd: c.guest.initrd, kernelVersion: c.guest.kernelVersion },
    hosts: c.hosts.map((h) => ({
      name: h.name,
      netns: h.netns,
      coordinator: h.coordinator,
      clusterIp: h.clusterIp,
      storageIp: h.storageIp,
      upstreamIp: h.upstreamIp,
      libvirtUri: h.libvirtUri,
      ipmi: h.ipmi,
      dir: h.dirs.root,
    })),
  };
}

/** Writes state.json for a cluster that is up. */
export async function writeClusterState(c: Cluster): Promise<string> {
  const file = join(entry(c.name), 'state.json');
  await writeFile(file, `${JSON.stringify({ ...describeCluster(c), upAt: new Date().toISOString() }, null, 2)}\n`);
  return file;
}
