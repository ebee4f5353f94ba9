/**
 * The bridges a stored domain XML attaches its interfaces to, and the client networks among them
 * (`vmbr<vni>`): the one reading vmd (bridges before a start), placement's callers (a target must
 * have the VM's networks) and the CLI share. Not a validating parser: libvirt validates the
 * document when the domain is created.
 *
 * @module
 */

const INTERFACE_EL = /<interface\b[\s\S]*?<\/interface>/g;
const CLIENT_BRIDGE = /^vmbr(0|[1-9][0-9]*)$/;

function unescapeXml(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

/** The value of attribute `name` of the first `<tag …>` in `el` (entities decoded), or undefined. */
function firstAttr(el: string, tag: string, name: string): string | undefined {
  const open = new RegExp(`<${tag}\\b[^>]*>`).exec(el)?.[0];
  const m = open && new RegExp(`\\s${name}\\s*=\\s*(['"])([^'"]*)\\1`).exec(open);
  return m?.[2] === undefined ? undefined : unescapeXml(m[2]);
}

/** The `<source bridge>` of every `<interface type='bridge'>` of a domain XML, each once, in document order. */
export function interfaceBridges(xml: string): string[] {
  const out: string[] = [];
  for (const [el] of xml.matchAll(INTERFACE_EL)) {
    if (firstAttr(el, 'interface', 'type') !== 'bridge') continue;
    const bridge = firstAttr(el, 'source', 'bridge');
    if (bridge && !out.includes(bridge)) out.push(bridge);
  }
  return out;
}

/** The VNI of a client network bridge name (`vmbr1100` → 1100), else undefined (`brcluster`, `vmbr01`). */
export function bridgeVni(name: string): number | undefined {
  const m = CLIENT_BRIDGE.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The VNIs of the `vmbr<vni>` bridges a domain XML's interfaces name, ascending, each once. */
export function xmlNetworks(xml: string): number[] {
  const vnis = interfaceBridges(xml).map(bridgeVni).filter((v): v is number => v !== undefined);
  return [...new Set(vnis)].sort((a, b) => a - b);
}

const MAC_ADDRESS = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
const DOMAIN_DOC = /^\s*(<\?xml\b[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*<domain\b[^>]*>[\s\S]*<\/domain>\s*$/;

/** What {@link interfaceMacs} read: the MACs, or why the document cannot be trusted. */
export type InterfaceMacs = { readonly ok: true; readonly macs: string[] } | { readonly ok: false; readonly why: string };

/**
 * The `<mac address>` of every `<interface>` of a stored domain XML (any type: bridge, direct,
 * hostdev — as the original's getDomainNetworks), lower-cased, each once, in document order. An
 * interface without `<mac>` has none to match. A document that is not one `<domain>…</domain>`,
 * whose `<interface>` elements do not close, or with a malformed MAC is refused as a whole (`ok:
 * false` and why): a caller matching guests by MAC must never guess from a broken document.
 */
export function interfaceMacs(xml: string): InterfaceMacs {
  if (!DOMAIN_DOC.test(xml)) return { ok: false, why: 'not a <domain> document (unparseable or truncated)' };
  const opened = (xml.match(/<interface\b/g) ?? []).length;
  const elements = [...xml.matchAll(INTERFACE_EL)].map(([el]) => el);
  if (elements.length !== opened) return { ok: false, why: `${opened - elements.length} <interface> element(s) not closed` };
  const macs: string[] = [];
  for (const el of elements) {
    const mac = firstAttr(el, 'mac', 'address');
    if (mac === undefined) continue;
    const lower = mac.toLowerCase();
    if (!MAC_ADDRESS.test(lower)) return { ok: false, why: `interface MAC address "${mac}" is malformed` };
    if (!macs.includes(lower)) macs.push(lower);
  }
  return { ok: true, macs };
}
