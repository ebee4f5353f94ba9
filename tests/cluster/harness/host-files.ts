import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Exec } from '@pvc/runtime';
import { prepareCephHostFiles, writeSystemctlShim } from './ceph.js';
import { cephMounts } from './ceph-plan.js';
import { lanConf, libvirtdConf, qemuConf, serviceScript, simEmu, virtlogdConf } from './configs.js';
import { ClusterError } from './errors.js';
import { IPMI_PORT } from './plan.js';
import type { ClusterPlan, HostPlan } from './plan.js';
import { runOk } from './run.js';
import type { ServiceSpec } from './types.js';
import { zkServerCommand, zooCfg } from './zookeeper.js';

/** Start order of the built-in services; services added through the harness come after them. */
const ORDER = { virtlogd: 10, libvirtd: 20, zookeeper: 30, user: 50 } as const;

function servicesDir(host: HostPlan): string {
  return join(host.dirs.root, 'services');
}

/** The host's own /etc/hosts: the file bind-mounted over /etc/hosts inside its mount namespace. */
export function etcHostsPath(host: HostPlan): string {
  return join(host.dirs.root, 'etc-hosts');
}

/**
 * /etc/hosts of every host: each host name (hv1…hvN) → its cluster address. The node config needs
 * short host names (coordinators, libvirt) and the cluster has no DNS.
 */
export function etcHosts(plan: ClusterPlan): string {
  return [
    '# Written by tests/cluster/harness: the cluster hosts on the cluster network.',
    '127.0.0.1 localhost',
    '::1 localhost ip6-localhost ip6-loopback',
    ...plan.hosts.map((h) => `${h.ips.cluster} ${h.name}`),
    '',
  ].join('\n');
}

/** The "<source> <target>" bind mounts host-init.sh sets up inside the host's mount namespace. */
function mountsFile(plan: ClusterPlan, host: HostPlan): string {
  const d = host.dirs;
  return [
    ...(plan.ceph ? cephMounts(plan.ceph, host) : []),
    `${etcHostsPath(host)} /etc/hosts`,
    `${d.runLibvirt} /run/libvirt`,
    `${d.varLibLibvirt} /var/lib/libvirt`,
    `${d.varLogLibvirt} /var/log/libvirt`,
    `${d.varCacheLibvirt} /var/cache/libvirt`,
    `${d.etcLibvirt} /etc/libvirt`,
    '',
  ].join('\n');
}

/** Writes (or replaces) one service script; `order` decides the start order at power-on. */
export async function writeService(host: HostPlan, order: number, spec: ServiceSpec): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(spec.name)) {
    throw new ClusterError('CLUSTER_SERVICE', `service name "${spec.name}" must match [a-z0-9][a-z0-9-]*`);
  }
  await removeService(host, spec.name);
  const file = join(servicesDir(host), `${String(order).padStart(2, '0')}-${spec.name}.sh`);
  await writeFile(file, serviceScript(host, spec.name, spec.command, spec.args ?? [], spec.env));
  await chmod(file, 0o755);
  return file;
}

/** Deletes a service script so later power-ons do not start it; returns whether it existed. */
export async function removeService(host: HostPlan, name: string): Promise<boolean> {
  const dir = servicesDir(host);
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.replace(/^\d\d-/, '') === `${name}.sh`);
  for (const f of files) await rm(join(dir, f), { force: true });
  return files.length > 0;
}

/** Start-order slot for services added through the harness. */
export const USER_SERVICE_ORDER = ORDER.user;

async function writeLibvirtFiles(host: HostPlan, exec: Exec): Promise<void> {
  const d = host.dirs;
  for (const dir of [d.runLibvirt, d.varLibLibvirt, d.varLogLibvirt, d.varCacheLibvirt, d.etcLibvirt]) {
    await mkdir(dir, { recursive: true });
  }
  for (const sub of ['qemu', 'images', 'boot', 'dnsmasq']) await mkdir(join(d.varLibLibvirt, sub), { recursive: true });
  // The host's /etc/libvirt starts as a copy of the real one, minus autostarted networks (virbr0).
  await runOk(exec, 'CLUSTER_FILES', 'cp', ['-a', '/etc/libvirt/.', `${d.etcLibvirt}/`]);
  await rm(join(d.etcLibvirt, 'qemu', 'networks', 'autostart'), { recursive: true, force: true });
  await writeFile(join(d.etcLibvirt, 'libvirtd.conf'), libvirtdConf(host));
  await writeFile(join(d.etcLibvirt, 'qemu.conf'), qemuConf(host));
  await writeFile(join(d.etcLibvirt, 'virtlogd.conf'), virtlogdConf());
  await writeService(host, ORDER.virtlogd, {
    name: 'virtlogd',
    command: 'virtlogd',
    args: ['-f', '/etc/libvirt/virtlogd.conf', '-p', '/run/libvirt/virtlogd.pid'],
  });
  await writeService(host, ORDER.libvirtd, {
    name: 'libvirtd',
    command: 'libvirtd',
    args: ['-l', '-f', '/etc/libvirt/libvirtd.conf', '-p', '/run/libvirt/libvirtd.pid'],
  });
}

async function writeZkFiles(plan: ClusterPlan, host: HostPlan): Promise<void> {
  await mkdir(join(host.dirs.zk, 'data'), { recursive: true });
  await writeFile(join(host.dirs.zk, 'data', 'myid'), `${host.index}\n`);
  await writeFile(join(host.dirs.zk, 'zoo.cfg'), zooCfg(plan, host));
  const { command, args } = zkServerCommand(host);
  await writeService(host, ORDER.zookeeper, { name: 'zookeeper', command, args });
}

/** Lays out one host's directory: environment, mounts, libvirt, Zookeeper and BMC configuration. */
export async function prepareHostFiles(plan: ClusterPlan, host: HostPlan, exec: Exec): Promise<void> {
  const root = host.dirs.root;
  for (const sub of ['run', 'log', 'services', 'bmc/state']) await mkdir(join(root, sub), { recursive: true });
  const env = {
    PVC_HOSTNAME: host.name,
    PVC_NETNS: host.netns,
    PVC_CLUSTER_IP: host.ips.cluster,
    PVC_IPMI_IP: host.ips.ipmi,
    PVC_IPMI_PORT: String(IPMI_PORT),
    // Read by host-power.sh: a power-off then clears what the node's bring-up configured.
    PVC_BARE_LINKS: plan.bareLinks ? '1' : '0',
  };
  await writeFile(join(root, 'host.env'), Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join(''));
  await writeFile(etcHostsPath(host), etcHosts(plan));
  await writeFile(join(root, 'mounts'), mountsFile(plan, host));
  await writeLibvirtFiles(host, exec);
  if (host.coordinator) await writeZkFiles(plan, host);
  await writeSystemctlShim(host);
  if (plan.ceph) await prepareCephHostFiles(plan.ceph, host);
  await writeFile(join(root, 'bmc', 'lan.conf'), lanConf(plan, host));
  await writeFile(join(root, 'bmc', 'sim.emu'), simEmu());
}
