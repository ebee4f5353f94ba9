import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { PrerequisiteError } from './errors.js';

/** Binaries the harness runs, with the Debian package that ships each. */
export const REQUIRED_BINARIES: Readonly<Record<string, string>> = {
  java: 'default-jre-headless (pulled in by zookeeper)',
  libvirtd: 'libvirt-daemon-system',
  virsh: 'libvirt-clients',
  virtlogd: 'libvirt-daemon-system',
  'qemu-system-x86_64': 'qemu-system-x86',
  ipmi_sim: 'openipmi',
  ipmitool: 'ipmitool',
  busybox: 'busybox-static',
  cpio: 'cpio',
  gzip: 'gzip',
  ip: 'iproute2',
  ss: 'iproute2',
  unshare: 'util-linux',
  nsenter: 'util-linux',
  setsid: 'util-linux',
  bash: 'bash',
};

/** Binaries a cluster with Ceph (ClusterOptions.ceph) also runs, with their Debian package. */
export const CEPH_BINARIES: Readonly<Record<string, string>> = {
  'ceph-mon': 'ceph-mon',
  'ceph-mgr': 'ceph-mgr',
  'ceph-osd': 'ceph-osd',
  ceph: 'ceph-common',
  rbd: 'ceph-common',
  monmaptool: 'ceph-common',
};

/** Zookeeper server jars (Debian's zookeeper package). */
export const ZK_JARS = [
  '/usr/share/java/zookeeper.jar',
  '/usr/share/java/zookeeper-jute.jar',
  '/usr/share/java/slf4j-log4j12.jar',
  '/usr/share/java/log4j-1.2.jar',
];
export const ZK_CONF_DIR = '/etc/zookeeper/conf';

/** Finds an executable on PATH (plus the sbin directories, which a non-login root PATH may lack). */
export function which(bin: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const d of dirs) {
    if (!d) continue;
    const p = join(d, bin);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Newest Debian cloud kernel in /boot, or undefined. */
export function findCloudKernel(bootDir = '/boot'): { path: string; version: string } | undefined {
  let names: string[];
  try {
    names = readdirSync(bootDir);
  } catch {
    return undefined;
  }
  const versions = names
    .filter((n) => /^vmlinuz-.*-cloud-amd64$/.test(n))
    .map((n) => n.slice('vmlinuz-'.length))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const version = versions.at(-1);
  return version === undefined ? undefined : { path: join(bootDir, `vmlinuz-${version}`), version };
}

/** Lists what is missing, in words; empty when everything is there. With `ceph`, Ceph's binaries too. */
export function missingPrerequisites(opts: { ceph?: boolean } = {}): string[] {
  const missing: string[] = [];
  const uid = process.getuid?.();
  if (uid !== 0) missing.push(`root privileges (running as uid ${String(uid)}): namespaces, bridges and libvirtd need root`);
  for (const [bin, pkg] of Object.entries(REQUIRED_BINARIES)) {
    if (!which(bin)) missing.push(`binary "${bin}" not found on PATH (Debian package ${pkg})`);
  }
  if (!findCloudKernel()) missing.push('kernel image /boot/vmlinuz-*-cloud-amd64 (Debian package linux-image-cloud-amd64)');
  for (const jar of ZK_JARS) {
    if (!existsSync(jar)) missing.push(`Zookeeper jar ${jar} (Debian package zookeeper)`);
  }
  if (!existsSync(join(ZK_CONF_DIR, 'log4j.properties'))) missing.push(`${ZK_CONF_DIR}/log4j.properties (Debian package zookeeper)`);
  if (!existsSync('/etc/libvirt')) missing.push('/etc/libvirt (Debian package libvirt-daemon-system)');
  if (opts.ceph) {
    for (const [bin, pkg] of Object.entries(CEPH_BINARIES)) {
      if (!which(bin)) missing.push(`binary "${bin}" not found on PATH (Debian package ${pkg}; scripts/setup.sh installs it)`);
    }
  }
  return missing;
}

/** Throws {@link PrerequisiteError} listing everything missing. */
export function assertPrerequisites(opts: { ceph?: boolean } = {}): void {
  const missing = missingPrerequisites(opts);
  if (missing.length > 0) throw new PrerequisiteError(missing);
}
