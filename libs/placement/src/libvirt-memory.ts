/**
 * Libvirt's memory units (`<memory unit='...'>`, case-insensitive; KiB when absent), as MiB per
 * unit. The one table every reader of a VM's size uses: vmd, keepaliled's fence recovery and the
 * `pvc` command all turn a domain XML's memory into the MiB that placement compares.
 */
const MIB_PER_UNIT: Readonly<Record<string, number>> = {
  b: 1 / 1024 ** 2, bytes: 1 / 1024 ** 2, kb: 1000 / 1024 ** 2, k: 1 / 1024, kib: 1 / 1024,
  mb: 1e6 / 1024 ** 2, m: 1, mib: 1, gb: 1e9 / 1024 ** 2, g: 1024, gib: 1024,
  tb: 1e12 / 1024 ** 2, t: 1024 ** 2, tib: 1024 ** 2,
};

/**
 * A `<memory>` value in its unit as MiB, not rounded (callers round as their use needs), or
 * undefined for a unit libvirt does not know.
 */
export function libvirtMemoryMiB(value: number, unit: string | undefined): number | undefined {
  const factor = MIB_PER_UNIT[(unit ?? 'KiB').toLowerCase()];
  return factor === undefined ? undefined : value * factor;
}
