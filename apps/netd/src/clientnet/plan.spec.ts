import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OWNER_ALIAS, type ClientNetwork, type DeviceAction, type Ipv6Settings, type NodeFacts, type ObservedDevices, type ObservedLink } from './model.js';
import { planClientNetworks } from './plan.js';

const FACTS: NodeFacts = { clusterDevice: 'ens4', clusterMtu: 1500, bridgeDevice: 'ens5', bridgeMtu: 9000, clusterAddress: '10.0.0.1', peers: ['10.0.0.2', '10.0.0.3'] };
const PEERS = ['10.0.0.2', '10.0.0.3'];
const LOWER: ObservedLink[] = [
  { name: 'ens4', index: 2, mtu: 1500, up: true },
  { name: 'ens5', index: 3, mtu: 9000, up: true },
];

type Host = { links: ObservedLink[]; flood: [string, string[]][]; ipv6: [string, Ipv6Settings][] | undefined };
const empty = (): Host => ({ links: [...LOWER], flood: [], ipv6: [] });
const managed = (vni: number, mtu: number | null = null): ClientNetwork => ({ vni, type: 'managed', mtu });
const bridged = (vni: number, mtu: number | null = null): ClientNetwork => ({ vni, type: 'bridged', mtu });

/** The host as netd leaves it for a network, then changed by `edit` (links by name). */
function host(nets: ClientNetwork[], edit: (h: Host) => void = () => {}): Host {
  const h = empty();
  for (const n of nets) {
    const mtu = n.mtu ?? (n.type === 'managed' ? 1450 : 9000);
    const member: ObservedLink = n.type === 'managed'
      ? { name: `vxlan${n.vni}`, index: 10 + n.vni, kind: 'vxlan', mtu, up: true, master: `vmbr${n.vni}`, alias: OWNER_ALIAS, id: n.vni, dstport: 4789, lower: 'ens4' }
      : { name: `vlan${n.vni}`, index: 10 + n.vni, kind: 'vlan', mtu, up: true, master: `vmbr${n.vni}`, alias: OWNER_ALIAS, id: n.vni, lower: 'ens5' };
    h.links.push(member, { name: `vmbr${n.vni}`, index: 20 + n.vni, kind: 'bridge', mtu, up: true, alias: OWNER_ALIAS });
    if (n.type === 'managed') h.flood.push([`vxlan${n.vni}`, [...PEERS]]);
    h.ipv6!.push([`vmbr${n.vni}`, n.type === 'managed' ? { accept_dad: '0', disable_ipv6: '0' } : { accept_dad: '1', disable_ipv6: '1' }]);
  }
  edit(h);
  return h;
}

/** Replaces fields of the observed link `name`. */
const set = (name: string, o: Partial<ObservedLink>) => (h: Host): void => {
  h.links = h.links.map((l) => (l.name === name ? { ...l, ...o } : l));
};
/** Removes the link `name` as the kernel does: its ports leave it. */
const drop = (name: string) => (h: Host): void => {
  h.links = h.links.filter((l) => l.name !== name).map((l) => (l.master === name ? { ...l, master: undefined } : l));
};
const floodOf = (device: string, dsts: string[]) => (h: Host): void => {
  h.flood = [...h.flood.filter(([d]) => d !== device), [device, dsts]];
};

const observed = (h: Host): ObservedDevices => ({ links: h.links, flood: new Map(h.flood), ipv6: h.ipv6 && new Map(h.ipv6) });

/** One action as a short string, e.g. "create-vxlan vxlan100/ens4 1450", "flood-add vxlan100 10.0.0.2". */
function brief(a: DeviceAction): string {
  switch (a.kind) {
    case 'create-vxlan':
    case 'create-vlan': return `${a.kind} ${a.device}/${a.lower} ${a.mtu}`;
    case 'create-bridge': return `create-bridge ${a.device} ${a.mtu}`;
    case 'set-mtu': return `mtu ${a.device} ${a.mtu}`;
    case 'set-master': return `master ${a.device} ${a.bridge}`;
    case 'set-up': return `up ${a.device}`;
    case 'set-ipv6': return `ipv6 ${a.device} ${a.key}=${a.value}`;
    case 'flood-add':
    case 'flood-del': return `${a.kind} ${a.device} ${a.dst}`;
    case 'delete': return `delete ${a.device}`;
  }
}

const NEW_100 = ['create-vxlan vxlan100/ens4 1450', 'create-bridge vmbr100 1450', 'master vxlan100 vmbr100', 'up vxlan100', 'up vmbr100', 'ipv6 vmbr100 accept_dad=0', 'flood-add vxlan100 10.0.0.2', 'flood-add vxlan100 10.0.0.3'];
const NEW_200 = ['create-vlan vlan200/ens5 9000', 'create-bridge vmbr200 9000', 'master vlan200 vmbr200', 'up vlan200', 'up vmbr200', 'ipv6 vmbr200 disable_ipv6=1'];

// [row, wanted networks, observed host, facts changes, expected actions ("problem:<reason>@<vni>" for problems)]
const TABLE: [string, ClientNetwork[], Host, Partial<NodeFacts>, string[]][] = [
  ['nothing wanted, nothing there', [], empty(), {}, []],
  ['managed, nothing there, mtu empty → cluster MTU − 50', [managed(100)], empty(), {}, NEW_100],
  ['managed, mtu above the maximum → the maximum', [managed(100, 9000)], empty(), {}, NEW_100],
  ['managed, mtu below the maximum → as asked', [managed(100, 1400)], empty(), {}, NEW_100.map((s) => s.replace('1450', '1400'))],
  ['managed, converged → nothing', [managed(100)], host([managed(100)]), {}, []],
  ['managed, MTU lowered → live, bridge first', [managed(100, 1400)], host([managed(100)]), {}, ['mtu vmbr100 1400', 'mtu vxlan100 1400']],
  ['managed, MTU raised → live, member first', [managed(100)], host([managed(100, 1400)]), {}, ['mtu vxlan100 1450', 'mtu vmbr100 1450']],
  ['managed, cluster MTU raised → both follow', [managed(100)], host([managed(100)]), { clusterMtu: 9000 }, ['mtu vxlan100 8950', 'mtu vmbr100 8950']],
  ['managed, member out of the bridge → master', [managed(100)], host([managed(100)], set('vxlan100', { master: undefined })), {}, ['master vxlan100 vmbr100']],
  ['managed, bridge down → up', [managed(100)], host([managed(100)], set('vmbr100', { up: false })), {}, ['up vmbr100']],
  ['managed, bridge missing → created, member put in it', [managed(100)], host([managed(100)], drop('vmbr100')), {}, ['create-bridge vmbr100 1450', 'master vxlan100 vmbr100', 'up vmbr100', 'ipv6 vmbr100 accept_dad=0']],
  ['managed, a node left → its entry deleted', [managed(100)], host([managed(100)]), { peers: ['10.0.0.2'] }, ['flood-del vxlan100 10.0.0.3']],
  ['managed, a node joined → its entry appended', [managed(100)], host([managed(100)]), { peers: [...PEERS, '10.0.0.4'] }, ['flood-add vxlan100 10.0.0.4']],
  ['managed, one node replaced by another → add before delete', [managed(100)], host([managed(100)]), { peers: ['10.0.0.2', '10.0.0.5'] }, ['flood-add vxlan100 10.0.0.5', 'flood-del vxlan100 10.0.0.3']],
  ['managed, own address among the peers → never an entry', [managed(100)], host([managed(100)]), { peers: [...PEERS, '10.0.0.1', '10.0.0.2'] }, []],
  ['managed, an entry for the own address → deleted', [managed(100)], host([managed(100)], floodOf('vxlan100', [...PEERS, '10.0.0.1'])), {}, ['flood-del vxlan100 10.0.0.1']],
  ['managed, accept_dad back at 1 → set', [managed(100)], host([managed(100)], (h) => { h.ipv6 = [['vmbr100', { accept_dad: '1' }]]; }), {}, ['ipv6 vmbr100 accept_dad=0']],
  ['managed, host without IPv6 → no IPv6 setting', [managed(100)], host([], (h) => { h.ipv6 = undefined; }), {}, NEW_100.filter((s) => !s.startsWith('ipv6'))],
  ['managed, cluster device missing → problem', [managed(100)], host([], drop('ens4')), {}, ['problem:no-lower-device@100']],
  ['managed, mtu 0 → problem', [managed(100, 0)], empty(), {}, ['problem:bad-mtu@100']],
  ['managed, mtu 1400.5 → problem', [managed(100, 1400.5)], empty(), {}, ['problem:bad-mtu@100']],
  ['managed, cluster MTU too small for VXLAN → problem', [managed(100)], empty(), { clusterMtu: 100 }, ['problem:bad-mtu@100']],
  ['VNI 0 → problem', [managed(0)], empty(), {}, ['problem:bad-vni@0']],
  ['bridged, nothing there, mtu empty → bridge_mtu', [bridged(200)], empty(), {}, NEW_200],
  ['bridged, mtu above bridge_mtu → bridge_mtu', [bridged(200, 9500)], empty(), {}, NEW_200],
  ['bridged, mtu 1500 → as asked', [bridged(200, 1500)], empty(), {}, NEW_200.map((s) => s.replace('9000', '1500'))],
  ['bridged, converged → nothing', [bridged(200)], host([bridged(200)]), {}, []],
  ['bridged, MTU lowered → live on both', [bridged(200, 1500)], host([bridged(200)]), {}, ['mtu vmbr200 1500', 'mtu vlan200 1500']],
  ['bridged, IPv6 back on → disabled', [bridged(200)], host([bridged(200)], (h) => { h.ipv6 = [['vmbr200', { disable_ipv6: '0' }]]; }), {}, ['ipv6 vmbr200 disable_ipv6=1']],
  ['bridged without bridge_device → problem', [bridged(200)], empty(), { bridgeDevice: undefined }, ['problem:no-bridge-device@200']],
  ['bridged, bridge_device missing → problem', [bridged(200)], host([], drop('ens5')), {}, ['problem:no-lower-device@200']],
  ['managed removed → bridge, then VXLAN deleted', [], host([managed(100)]), {}, ['delete vmbr100', 'delete vxlan100']],
  ['bridged removed → bridge, then VLAN deleted (never bridge_device)', [], host([bridged(200)]), {}, ['delete vmbr200', 'delete vlan200']],
  ['a half-made network removed → what is there deleted', [], host([managed(100)], drop('vmbr100')), {}, ['delete vxlan100']],
  ['a bridge netd did not make, no network → left alone', [], host([], (h) => h.links.push({ name: 'vmbr300', index: 9, kind: 'bridge', mtu: 1500, up: true })), {}, []],
  ['a bridge netd did not make, of the right shape → used, not created', [managed(100)], host([managed(100)], set('vmbr100', { alias: undefined })), {}, []],
  ['a bridge netd did not make, MTU differs → set live', [managed(100, 1400)], host([managed(100)], set('vmbr100', { alias: undefined })), {}, ['mtu vmbr100 1400', 'mtu vxlan100 1400']],
  ['a VXLAN netd did not make with another id → problem, nothing changed', [managed(100)], host([managed(100)], set('vxlan100', { alias: undefined, id: 7 })), {}, ['problem:foreign-device@100']],
  ['a vmbr netd did not make that is no bridge → problem', [managed(100)], host([managed(100)], set('vmbr100', { alias: undefined, kind: 'veth' })), {}, ['problem:foreign-device@100']],
  ['its VXLAN with another id → recreated (no entries yet)', [managed(100)], host([managed(100)], set('vxlan100', { id: 7 })), {}, ['delete vxlan100', 'create-vxlan vxlan100/ens4 1450', 'master vxlan100 vmbr100', 'up vxlan100', 'flood-add vxlan100 10.0.0.2', 'flood-add vxlan100 10.0.0.3']],
  ['its VXLAN over another device (cluster device changed) → recreated', [managed(100)], host([managed(100)]), { clusterDevice: 'ens5', clusterMtu: 9000 }, ['delete vxlan100', 'create-vxlan vxlan100/ens5 8950', 'mtu vmbr100 8950', 'master vxlan100 vmbr100', 'up vxlan100', 'flood-add vxlan100 10.0.0.2', 'flood-add vxlan100 10.0.0.3']],
  ['its VXLAN on the wrong port → recreated', [managed(100)], host([managed(100)], set('vxlan100', { dstport: 8472 })), {}, ['delete vxlan100', 'create-vxlan vxlan100/ens4 1450', 'master vxlan100 vmbr100', 'up vxlan100', 'flood-add vxlan100 10.0.0.2', 'flood-add vxlan100 10.0.0.3']],
  ['type managed → bridged: VXLAN deleted, VLAN made, bridge kept', [bridged(100, 1450)], host([managed(100)]), {}, ['delete vxlan100', 'create-vlan vlan100/ens5 1450', 'master vlan100 vmbr100', 'up vlan100', 'ipv6 vmbr100 disable_ipv6=1']],
  ['removals first, then networks by VNI', [managed(300), managed(100)], host([managed(100), bridged(200)], drop('vmbr100')), { peers: ['10.0.0.2'] },
    ['delete vmbr200', 'delete vlan200', 'create-bridge vmbr100 1450', 'master vxlan100 vmbr100', 'up vmbr100', 'ipv6 vmbr100 accept_dad=0', 'flood-del vxlan100 10.0.0.3', 'create-vxlan vxlan300/ens4 1450', 'create-bridge vmbr300 1450', 'master vxlan300 vmbr300', 'up vxlan300', 'up vmbr300', 'ipv6 vmbr300 accept_dad=0', 'flood-add vxlan300 10.0.0.2']],
  ['one network\'s problem leaves the others planned', [managed(100), bridged(200)], empty(), { bridgeDevice: undefined }, [...NEW_100, 'problem:no-bridge-device@200']],
];

describe('planClientNetworks(): the decision table', () => {
  for (const [row, nets, h, facts, want] of TABLE) {
    it(`${row}`, () => {
      const p = planClientNetworks({ networks: nets, facts: { ...FACTS, ...facts }, observed: observed(h) });
      assert.deepEqual([...p.actions.map(brief), ...p.problems.map((x) => `problem:${x.reason}@${x.vni}`)], want);
    });
  }
});

describe('planClientNetworks(): level-based', () => {
  it('the same inputs give the same plan', () => {
    const i = { networks: [managed(101), bridged(200)], facts: FACTS, observed: observed(empty()) };
    assert.deepEqual(planClientNetworks(i), planClientNetworks(i));
  });
  it('a network listed twice is planned once', () => {
    const p = planClientNetworks({ networks: [managed(100), managed(100)], facts: FACTS, observed: observed(empty()) });
    assert.deepEqual(p.actions.map(brief), NEW_100);
  });
  it('a problem names the device and what netd wants', () => {
    const h = host([managed(100)], set('vxlan100', { alias: undefined, id: 7 }));
    const p = planClientNetworks({ networks: [managed(100)], facts: FACTS, observed: observed(h) });
    assert.match(p.problems[0]?.detail ?? '', /vxlan100 exists \(kind vxlan, id 7, port 4789, on ens4\) and was not made by netd; netd wants VXLAN id 100 port 4789 on ens4/);
  });
  it('every change names its network', () => {
    const p = planClientNetworks({ networks: [managed(100), bridged(200)], facts: FACTS, observed: observed(host([managed(300)])) });
    assert.deepEqual([...new Set(p.actions.map((a) => a.vni))], [300, 100, 200]);
  });
});
