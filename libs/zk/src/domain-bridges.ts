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
