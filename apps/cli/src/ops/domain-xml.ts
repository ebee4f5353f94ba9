import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { libvirtMemoryMiB } from '@pvc/placement';
import { usage } from '../errors.js';

/**
 * A libvirt domain XML as the CLI reads and edits it (define, modify, vcpu/memory set, info).
 * Parsed with a real XML parser so that "not XML", "not a domain" and malformed values are told
 * apart and named; edits change only the elements they touch and keep the rest of the document.
 */
export interface DomainXml {
  readonly doc: Document;
  /** Where it came from, for messages (a file name, or `VM <name>`). */
  readonly source: string;
  readonly name: string;
  /** Lower-cased, or undefined when the XML has none. */
  readonly uuid: string | undefined;
  readonly memoryMiB: number;
  readonly vcpus: number;
  /** MAC addresses of the interfaces, lower-cased. */
  readonly macs: readonly string[];
  /** `pool/volume` of every RBD disk that is not a snapshot (the domain's `rbdlist`). */
  readonly rbdVolumes: readonly string[];
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

/** Parses and checks a domain XML; every problem is one line naming `source` and what is wrong. */
export function parseDomainXml(text: string, source: string): DomainXml {
  const doc = parseDocument(text, source);
  const root = doc.documentElement;
  if (!root || root.nodeName !== 'domain') {
    throw usage(`${source}: not a libvirt domain XML: the root element is <${root?.nodeName ?? 'nothing'}>, expected <domain>`);
  }
  if (!root.getAttribute('type')) throw usage(`${source}: <domain> has no type attribute (e.g. type='kvm')`);
  const name = childText(root, 'name');
  if (!name) throw usage(`${source}: the domain has no <name>`);
  if (name.includes('/') || /\s/.test(name)) throw usage(`${source}: domain name "${name}" must not contain "/" or spaces`);
  const uuidText = childText(root, 'uuid');
  if (uuidText !== undefined && !UUID.test(uuidText)) throw usage(`${source}: <uuid> "${uuidText}" is not a UUID`);
  return {
    doc, source, name,
    uuid: uuidText === undefined ? undefined : canonicalUuid(uuidText),
    memoryMiB: memoryOf(root, source),
    vcpus: vcpusOf(root, source),
    macs: macsOf(root, source),
    rbdVolumes: rbdOf(root),
  };
}

/** The document as text (after edits). */
export function serializeDomain(dx: DomainXml): string {
  return new XMLSerializer().serializeToString(dx.doc);
}

/** Sets (or adds) `<uuid>`; returns the re-read domain. */
export function withUuid(dx: DomainXml, uuid: string): DomainXml {
  setChildText(dx.doc, 'uuid', uuid, 'name');
  return parseDomainXml(serializeDomain(dx), dx.source);
}

/** Sets `<vcpu>`; returns the re-read domain. */
export function withVcpus(dx: DomainXml, vcpus: number): DomainXml {
  setChildText(dx.doc, 'vcpu', String(vcpus));
  return parseDomainXml(serializeDomain(dx), dx.source);
}

/** Sets `<memory>` and `<currentMemory>` (when present) in MiB; returns the re-read domain. */
export function withMemoryMiB(dx: DomainXml, mib: number): DomainXml {
  for (const tag of ['memory', 'currentMemory']) {
    const el = firstChild(dx.doc.documentElement as Element, tag);
    if (!el && tag === 'currentMemory') continue;
    const target = el ?? setChildText(dx.doc, tag, '0');
    target.setAttribute('unit', 'MiB');
    target.textContent = String(mib);
  }
  return parseDomainXml(serializeDomain(dx), dx.source);
}

/** A `<cpu><topology>` of the domain. */
export interface CpuTopology {
  sockets: number;
  cores: number;
  threads: number;
}

/**
 * The `<cpu><topology>` element, or undefined when the domain has none. Missing attributes count
 * as 1 (libvirt's default); a value that is not a positive whole number is an error naming it.
 */
export function cpuTopology(dx: DomainXml): CpuTopology | undefined {
  const cpu = firstChild(dx.doc.documentElement as Element, 'cpu');
  const topo = cpu ? firstChild(cpu, 'topology') : undefined;
  if (!topo) return undefined;
  const attr = (name: string): number => {
    const raw = topo.getAttribute(name);
    if (raw === null || raw === '') return 1;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw usage(`${dx.source}: <topology ${name}="${raw}"> is not a positive whole number`);
    return Number(raw);
  };
  return { sockets: attr('sockets'), cores: attr('cores'), threads: attr('threads') };
}

function parseDocument(text: string, source: string): Document {
  if (text.trim() === '') throw usage(`${source}: empty file, expected a libvirt domain XML`);
  const problems: string[] = [];
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') problems.push(message.split('\n')[0] ?? message);
      },
    }).parseFromString(text, 'text/xml');
  } catch (err) {
    throw usage(`${source}: not well-formed XML: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`);
  }
  if (problems.length > 0) throw usage(`${source}: not well-formed XML: ${problems[0] ?? ''}`);
  return doc;
}

function firstChild(parent: Element, tag: string): Element | undefined {
  for (let n = parent.firstChild; n; n = n.nextSibling) if (n.nodeType === 1 && n.nodeName === tag) return n as Element;
  return undefined;
}

function childText(parent: Element, tag: string): string | undefined {
  const el = firstChild(parent, tag);
  return el ? (el.textContent ?? '').trim() : undefined;
}

function setChildText(doc: Document, tag: string, value: string, after?: string): Element {
  const root = doc.documentElement as Element;
  let el = firstChild(root, tag);
  if (!el) {
    el = doc.createElement(tag);
    const anchor = after ? firstChild(root, after) : undefined;
    root.insertBefore(el, anchor ? anchor.nextSibling : root.firstChild);
  }
  el.textContent = value;
  return el;
}

function canonicalUuid(text: string): string {
  const h = text.replace(/-/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function memoryOf(root: Element, source: string): number {
  const el = firstChild(root, 'memory');
  if (!el) throw usage(`${source}: the domain has no <memory>`);
  const value = (el.textContent ?? '').trim();
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw usage(`${source}: <memory> "${value}" is not a positive whole number`);
  const mib = libvirtMemoryMiB(Number(value), el.getAttribute('unit') || undefined);
  if (mib === undefined) throw usage(`${source}: <memory unit="${el.getAttribute('unit') ?? ''}"> is not a libvirt memory unit`);
  return Math.ceil(mib);
}

function vcpusOf(root: Element, source: string): number {
  const text = childText(root, 'vcpu');
  if (text === undefined) return 1;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw usage(`${source}: <vcpu> "${text}" is not a positive whole number`);
  return Number(text);
}

function devicesOf(root: Element, tag: string): Element[] {
  const devices = firstChild(root, 'devices');
  const out: Element[] = [];
  for (let n = devices?.firstChild ?? null; n; n = n.nextSibling) if (n.nodeType === 1 && n.nodeName === tag) out.push(n as Element);
  return out;
}

function macsOf(root: Element, source: string): string[] {
  const macs: string[] = [];
  for (const iface of devicesOf(root, 'interface')) {
    const mac = firstChild(iface, 'mac')?.getAttribute('address');
    if (mac === undefined || mac === null) continue;
    if (!MAC.test(mac)) throw usage(`${source}: interface MAC address "${mac}" is malformed (expected six hex pairs like 52:54:00:12:34:56)`);
    macs.push(mac.toLowerCase());
  }
  return macs;
}

/**
 * `<source name>` of every `<disk type='network'>` whose source has `protocol='rbd'`, in document
 * order, as the original's getDomainDisks (the `<host>`, `<auth>` and `<config>` children do not
 * matter). A disk that reads a snapshot — `name='pool/vol@snap'` or a `<snapshot name>` child —
 * is left out: a snapshot is read-only, so its reader holds no lock to flush, and the volume is
 * not this VM's to lock, snapshot or remove (the original lists the name as it is; cephd refuses
 * an `@` name, so such a VM could never start).
 */
function rbdOf(root: Element): string[] {
  const out: string[] = [];
  for (const disk of devicesOf(root, 'disk')) {
    const src = firstChild(disk, 'source');
    if (disk.getAttribute('type') !== 'network' || src?.getAttribute('protocol') !== 'rbd') continue;
    const name = src.getAttribute('name');
    if (name && !name.includes('@') && !firstChild(src, 'snapshot')) out.push(name);
  }
  return out;
}
