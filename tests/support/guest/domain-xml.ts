/** Options of {@link guestDomainXml}. */
export interface GuestDomainOptions {
  name: string;
  kernel: string;
  initrd: string;
  /** File that receives everything the guest prints on its serial console. */
  consoleLog: string;
  memoryMiB?: number;
  vcpus?: number;
  /** 'qemu' = TCG (default: KVM guests hang on the test machines); production uses 'kvm'. */
  domainType?: 'qemu' | 'kvm';
  uuid?: string;
  /** virtio NICs, each a port of a host bridge (e.g. `vmbr<vni>`), in this order (eth0, eth1, …). */
  interfaces?: readonly GuestInterface[];
  /** Raw RBD disks on virtio, in this order (vda, vdb, …); see {@link GuestDisk}. */
  disks?: readonly GuestDisk[];
  /**
   * Appended to the kernel command line, e.g. `pvc.net=dhcp pvc.ping=10.1.0.1` (init.sh reads
   * `pvc.net=dhcp`, `pvc.ping=<ip>[,<ip>]`, `pvc.renew=<s>`, `pvc.disk=/dev/vda`,
   * `pvc.marker=write:<text>`, `pvc.diskwrite=<s>`). Words of `[A-Za-z0-9._,=:/-]` only.
   */
  cmdline?: string;
}

/** One NIC of the guest. */
export interface GuestInterface {
  /** Host bridge the NIC's tap joins. */
  bridge: string;
  /** xx:xx:xx:xx:xx:xx */
  mac: string;
}

/**
 * One raw disk on an RBD image: `<disk type='network' device='disk'>` with `cache='none'` (a
 * write the guest synced is then on the image: the integration test reads it with `rbd export`) and `<source
 * protocol='rbd' name='<pool>/<image>'>`, no `<auth>` (the test Ceph runs with auth none). Without
 * `hosts` or `config`, QEMU's librados reads /etc/ceph/ceph.conf (the cluster tier's hosts see the
 * cluster's conf there).
 */
export interface GuestDisk {
  pool: string;
  image: string;
  /** Monitors as `<host name port>` children (librados then needs no conf for them). */
  hosts?: readonly { name: string; port?: number }[];
  /** `<config file='…'/>`: a ceph.conf other than /etc/ceph/ceph.conf. */
  config?: string;
}

const RBD_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.+-]*$/;

function diskXml(d: GuestDisk, index: number): string[] {
  for (const [what, v] of [['pool', d.pool], ['image', d.image]] as const) {
    if (!RBD_NAME.test(v)) throw new Error(`guest disk ${what} "${v}" must be a plain RBD name ([A-Za-z0-9_.+-], not starting with - or +)`);
  }
  if (index > 25) throw new Error('a guest takes at most 26 disks (vda–vdz)');
  for (const h of d.hosts ?? []) {
    if (!/^[A-Za-z0-9.:-]+$/.test(h.name)) throw new Error(`guest disk monitor host "${h.name}" must be an address or host name`);
    if (h.port !== undefined && !(Number.isInteger(h.port) && h.port > 0 && h.port < 65536)) throw new Error(`guest disk monitor port ${h.port} is not a port`);
  }
  const inner = [
    ...(d.hosts ?? []).map((h) => `        <host name='${xmlEscape(h.name)}'${h.port === undefined ? '' : ` port='${h.port}'`}/>`),
    ...(d.config === undefined ? [] : [`        <config file='${xmlEscape(d.config)}'/>`]),
  ];
  const name = `${d.pool}/${d.image}`;
  return [
    "    <disk type='network' device='disk'>",
    "      <driver name='qemu' type='raw' cache='none'/>",
    ...(inner.length === 0 ? [`      <source protocol='rbd' name='${name}'/>`] : [`      <source protocol='rbd' name='${name}'>`, ...inner, '      </source>']),
    `      <target dev='vd${String.fromCharCode(97 + index)}' bus='virtio'/>`,
    '    </disk>',
  ];
}

function interfaceXml(i: GuestInterface): string[] {
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(i.bridge)) throw new Error(`guest interface bridge "${i.bridge}" must be an interface name (1–15 chars)`);
  if (!/^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$/.test(i.mac)) throw new Error(`guest interface MAC "${i.mac}" must be xx:xx:xx:xx:xx:xx`);
  return [
    "    <interface type='bridge'>",
    `      <source bridge='${i.bridge}'/>`,
    `      <mac address='${i.mac.toLowerCase()}'/>`,
    "      <model type='virtio'/>",
    '    </interface>',
  ];
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&apos;').replace(/"/g, '&quot;');
}

/**
 * A domain booting the tiny guest by direct kernel boot, diskless and NIC-less unless `disks` or
 * `interfaces` are given. Its serial console (console=ttyS0) is a pty whose output libvirt also
 * appends to `consoleLog`. Diskless guests can be live-migrated without shared storage; RBD disks
 * are network storage, which libvirt migrates without copying.
 */
export function guestDomainXml(o: GuestDomainOptions): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(o.name)) {
    throw new Error(`guest name "${o.name}" must be 1–63 chars of [A-Za-z0-9._-]`);
  }
  const memory = o.memoryMiB ?? 128;
  const vcpus = o.vcpus ?? 1;
  if (!Number.isInteger(memory) || memory < 64) throw new Error(`guest memoryMiB ${memory} must be an integer ≥ 64`);
  if (!Number.isInteger(vcpus) || vcpus < 1) throw new Error(`guest vcpus ${vcpus} must be an integer ≥ 1`);
  const extra = o.cmdline?.trim() ?? '';
  if (!/^[A-Za-z0-9._,=:/ -]*$/.test(extra)) throw new Error(`guest cmdline "${extra}" may hold only [A-Za-z0-9._,=:/-] words`);
  return [
    `<domain type='${o.domainType ?? 'qemu'}'>`,
    `  <name>${xmlEscape(o.name)}</name>`,
    ...(o.uuid ? [`  <uuid>${xmlEscape(o.uuid)}</uuid>`] : []),
    `  <memory unit='MiB'>${memory}</memory>`,
    `  <vcpu>${vcpus}</vcpu>`,
    '  <os>',
    "    <type arch='x86_64' machine='pc'>hvm</type>",
    `    <kernel>${xmlEscape(o.kernel)}</kernel>`,
    `    <initrd>${xmlEscape(o.initrd)}</initrd>`,
    `    <cmdline>console=ttyS0 quiet panic=-1 pvc.name=${xmlEscape(o.name)}${extra ? ` ${extra}` : ''}</cmdline>`,
    '  </os>',
    '  <features><acpi/></features>',
    "  <clock offset='utc'/>",
    '  <on_poweroff>destroy</on_poweroff>',
    '  <on_reboot>restart</on_reboot>',
    '  <on_crash>destroy</on_crash>',
    '  <devices>',
    '    <emulator>/usr/bin/qemu-system-x86_64</emulator>',
    "    <serial type='pty'>",
    `      <log file='${xmlEscape(o.consoleLog)}' append='on'/>`,
    "      <target port='0'/>",
    '    </serial>',
    "    <console type='pty'><target type='serial' port='0'/></console>",
    ...(o.disks ?? []).flatMap(diskXml),
    ...(o.interfaces ?? []).flatMap(interfaceXml),
    "    <memballoon model='none'/>",
    '  </devices>',
    '</domain>',
    '',
  ].join('\n');
}
