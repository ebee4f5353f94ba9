import { VmdError } from './errors.js';

/**
 * The few things vmd reads from or changes in a domain XML. This is deliberately not a full XML
 * parser: libvirt validates the document when the domain is created, and its message is what the
 * user sees in `failedreason`. We need the top-level uuid and domain type (stored XML) and the
 * disks and bridge interfaces (live XML, for `stats`). Sizes (`<memory>`, `<vcpu>`) are read by
 * `domainXmlFacts` of `@pvc/zk`, shared with keepaliled and the CLI, and so are the bridges a stored
 * XML's interfaces name (`interfaceBridges`, checked before a start).
 */

const DOMAIN_OPEN = /<domain\b[^>]*>/;
const TYPE_ATTR = /\btype\s*=\s*(['"])([^'"]*)\1/;
const UUID_EL = /<uuid>\s*([^<\s]+)\s*<\/uuid>/;

/** The value of attribute `name` in an element's text (XML entities decoded), or undefined. */
export function xmlAttr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*(['"])([^'"]*)\\1`).exec(tag);
  return m?.[2] === undefined ? undefined : unescapeXml(m[2]);
}

function unescapeXml(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
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

/** A disk of a live domain XML: its target device and what the original names it by. */
export interface LiveDisk {
  /** `<target dev>` (libvirt's block stats name, e.g. `sda`). */
  readonly dev: string;
  /** `<source name>` (RBD `pool/volume`), else `<source file>`, else `<source dev>`. */
  readonly source: string;
}

/** A `type='bridge'` interface of a live domain XML. */
export interface LiveBridgeInterface {
  /** `<target dev>`: the host's tap device (libvirt's interface stats name, e.g. `vnet0`). */
  readonly dev: string;
  /** `<source bridge>`. */
  readonly bridge: string;
}

/** The devices `stats` reports on. */
export interface LiveDevices {
  readonly disks: readonly LiveDisk[];
  readonly bridges: readonly LiveBridgeInterface[];
}

/**
 * The disks with a source and the bridge interfaces of a live domain XML (the target devices are
 * only known there), in document order: what the original's keepalive reports stats for. A disk
 * without a source (an empty CD-ROM drive) is left out; the original's keepalive fails on it and
 * writes no stats for the whole VM.
 */
export function liveDevices(xml: string): LiveDevices {
  const disks: LiveDisk[] = [];
  for (const [el] of xml.matchAll(/<disk\b[\s\S]*?<\/disk>/g)) {
    const dev = firstAttr(el, 'target', 'dev');
    const src = /<source\b[^>]*>/.exec(el)?.[0];
    const source = src && (xmlAttr(src, 'name') ?? xmlAttr(src, 'file') ?? xmlAttr(src, 'dev'));
    if (dev && source) disks.push({ dev, source });
  }
  const bridges: LiveBridgeInterface[] = [];
  for (const [el] of xml.matchAll(/<interface\b[\s\S]*?<\/interface>/g)) {
    if (xmlAttr(/^<interface\b[^>]*>/.exec(el)?.[0] ?? '', 'type') !== 'bridge') continue;
    const dev = firstAttr(el, 'target', 'dev');
    const bridge = firstAttr(el, 'source', 'bridge');
    if (dev && bridge) bridges.push({ dev, bridge });
  }
  return { disks, bridges };
}

function firstAttr(el: string, tag: string, name: string): string | undefined {
  const open = new RegExp(`<${tag}\\b[^>]*>`).exec(el)?.[0];
  return open && xmlAttr(open, name);
}
