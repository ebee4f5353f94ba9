import { libvirtMemoryMiB } from '@pvc/placement';
import { VmdError } from './errors.js';

/**
 * The few things vmd reads from or changes in a stored domain XML. This is deliberately not a full
 * XML parser: libvirt validates the document when the domain is created, and its message is what
 * the user sees in `failedreason`. We only need the top-level uuid, memory, vcpu and domain type.
 */

const DOMAIN_OPEN = /<domain\b[^>]*>/;
const TYPE_ATTR = /\btype\s*=\s*(['"])([^'"]*)\1/;
const UUID_EL = /<uuid>\s*([^<\s]+)\s*<\/uuid>/;
const MEMORY_EL = /<memory\b([^>]*)>\s*(\d+)\s*<\/memory>/;
const UNIT_ATTR = /\bunit\s*=\s*(['"])([^'"]*)\1/;


/** The `<memory>` of a domain XML in MiB (libvirt's default unit is KiB), or undefined. */
export function xmlMemoryMiB(xml: string): number | undefined {
  const m = MEMORY_EL.exec(xml);
  if (!m) return undefined;
  const mib = libvirtMemoryMiB(Number(m[2]), UNIT_ATTR.exec(m[1] ?? '')?.[2]);
  return mib === undefined ? undefined : Math.round(mib);
}

/** The top-level `<uuid>` of a domain XML, lower-cased, or undefined. */
export function xmlUuid(xml: string): string | undefined {
  return UUID_EL.exec(xml)?.[1]?.toLowerCase();
}

/** Options of {@link prepareXml}. */
export interface PrepareOptions {
  /** `system.configuration.hypervisor.domain_type`. */
  domainType: 'kvm' | 'qemu' | string;
}

/**
 * The XML vmd hands to libvirt for VM `uuid`. Kept as stored, except:
 * - no `<uuid>`: the key's UUID is added (otherwise libvirt would invent one and vmd would never
 *   find the domain again, starting it on every pass);
 * - a different `<uuid>`: refused (`BAD_XML`), naming both;
 * - `domain_type` is `qemu` (TCG, no /dev/kvm) and the XML says `kvm`: the type becomes `qemu`, so
 *   a cluster configured for TCG can run VMs defined for KVM. `kvm` config leaves the XML alone.
 */
export function prepareXml(xml: string, uuid: string, opts: PrepareOptions): string {
  const open = DOMAIN_OPEN.exec(xml);
  if (!open) throw new VmdError('BAD_XML', 'the stored XML has no <domain> element');
  const found = xmlUuid(xml);
  if (found !== undefined && found !== uuid.toLowerCase()) {
    throw new VmdError('BAD_XML', `the stored XML's <uuid> ${found} differs from the VM's key ${uuid}`);
  }
  let out = xml;
  if (opts.domainType === 'qemu' && TYPE_ATTR.exec(open[0])?.[2] === 'kvm') {
    out = out.replace(open[0], open[0].replace(TYPE_ATTR, (_m, q: string) => `type=${q}qemu${q}`));
  }
  if (found === undefined) {
    const at = out.indexOf(open[0]) + open[0].length;
    out = `${out.slice(0, at)}\n  <uuid>${uuid}</uuid>${out.slice(at)}`;
  }
  return out;
}
