/**
 * VXLAN head-end replication without EVPN, for real: three "nodes" (network namespaces) on a
 * bridged "cluster" network, each given `vxlan100` + `vmbr100` by convergeClientNetworks over the
 * real adapter, with the other nodes' cluster addresses as flooding entries. Two "guests" (more
 * namespaces, a veth each into vmbr100 on nodes A and B) ping across the VXLAN. The ping fails while
 * A lacks B's entry and works once B has "joined"; the third node learns guest A's MAC from the
 * replicated broadcast; removing the network leaves nothing netd made. Root only.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createExec } from '@pvc/runtime';
import { convergeClientNetworks } from '../../../apps/netd/src/clientnet/converge.js';
import { createIpDevices } from '../../../apps/netd/src/clientnet/ip-devices.js';
import type { ClientNetwork, NodeFacts } from '../../../apps/netd/src/clientnet/model.js';
import { addNetns, deleteNetns, ip } from './nft-netns.js';

const TAG = `${process.pid}`;
const SW = `pvc-vxsw-${TAG}`;
const NODES = [
  { name: 'A', ns: `pvc-vxa-${TAG}`, addr: '10.77.0.1' },
  { name: 'B', ns: `pvc-vxb-${TAG}`, addr: '10.77.0.2' },
  { name: 'C', ns: `pvc-vxc-${TAG}`, addr: '10.77.0.3' },
] as const;
const GUESTS = [
  { ns: `pvc-vxga-${TAG}`, node: NODES[0], addr: '10.200.0.1' },
  { ns: `pvc-vxgb-${TAG}`, node: NODES[1], addr: '10.200.0.2' },
] as const;
const NET: ClientNetwork[] = [{ vni: 100, type: 'managed', mtu: null }];
const exec = createExec();

type Node = (typeof NODES)[number];

const facts = (n: Node, peers: readonly Node[]): NodeFacts => ({
  clusterDevice: 'cl0', clusterMtu: 1500, clusterAddress: n.addr, peers: peers.map((p) => p.addr),
});

/** One pass on node `n` with the given networks and peers; every change must succeed. */
async function converge(n: Node, nets: ClientNetwork[], peers: readonly Node[]): Promise<void> {
  const port = createIpDevices({ exec, prefix: ['ip', 'netns', 'exec', n.ns] });
  const r = await convergeClientNetworks(port, nets, facts(n, peers));
  assert.deepEqual([r.failed.map((f) => f.error.message), r.problems], [[], []], `node ${n.name}`);
}

const pingOnce = (from: string, to: string): boolean =>
  spawnSync('ip', ['netns', 'exec', from, 'ping', '-c', '1', '-W', '1', to], { encoding: 'utf8' }).status === 0;

/** Polls `cond` until it holds or `ms` pass; returns whether it held. */
async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (cond()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const macOf = (ns: string, dev: string): string => (JSON.parse(ip('-n', ns, '-json', 'link', 'show', dev)) as { address: string }[])[0]!.address;
/** Where node `n`'s vxlan100 sends frames for `mac` (a learned entry), if it knows. */
function learnedDst(n: Node, mac: string): string | undefined {
  const r = spawnSync('ip', ['netns', 'exec', n.ns, 'bridge', '-json', 'fdb', 'show', 'dev', 'vxlan100'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  // The bridge's own entry for the port (`master vmbr100`) has no dst; the VXLAN's (`self`) has.
  return (JSON.parse(r.stdout || '[]') as { mac?: string; dst?: string }[]).find((e) => e.mac === mac && e.dst !== undefined)?.dst;
}

function cleanup(): void {
  for (const ns of [...GUESTS.map((g) => g.ns), ...NODES.map((n) => n.ns), SW]) deleteNetns(ns);
}

describe('client networks: VXLAN head-end replication between namespaces (root)', () => {
  before(() => {
    assert.equal(process.getuid?.(), 0, 'needs root (network namespaces)');
    assert.equal(spawnSync('ping', ['-V']).status, 0, 'ping is needed (Debian package iputils-ping)');
    addNetns(SW);
    ip('-n', SW, 'link', 'add', 'sw', 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0');
    ip('-n', SW, 'link', 'set', 'sw', 'up');
    for (const [i, n] of NODES.entries()) {
      addNetns(n.ns);
      ip('-n', n.ns, 'link', 'add', 'cl0', 'mtu', '1500', 'type', 'veth', 'peer', 'name', `p${i}`, 'netns', SW);
      ip('-n', SW, 'link', 'set', `p${i}`, 'master', 'sw', 'up');
      ip('-n', n.ns, 'address', 'add', `${n.addr}/24`, 'dev', 'cl0');
      ip('-n', n.ns, 'link', 'set', 'cl0', 'up');
    }
  });
  after(cleanup);

  it('the guests cannot reach each other while node A has no flooding entry for node B', async () => {
    const [a, b, c] = NODES;
    await converge(a, NET, [c]);
    await converge(b, NET, [a, c]);
    await converge(c, NET, [a, b]);
    for (const g of GUESTS) {
      addNetns(g.ns);
      ip('-n', g.node.ns, 'link', 'add', 'tap0', 'mtu', '1450', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', g.ns);
      ip('-n', g.node.ns, 'link', 'set', 'tap0', 'master', 'vmbr100', 'up');
      ip('-n', g.ns, 'address', 'add', `${g.addr}/24`, 'dev', 'eth0');
      ip('-n', g.ns, 'link', 'set', 'eth0', 'up');
    }
    // A's ARP request for guest B is replicated to C only: no answer within 3 s.
    assert.equal(await waitFor(() => pingOnce(GUESTS[0].ns, GUESTS[1].addr), 3_000), false, 'ping must fail without the entry');
  });

  it('once node A floods to node B, guest A pings guest B across the VXLAN', async () => {
    const [a, b, c] = NODES;
    // What node C learnt from the broadcasts so far is forgotten: the next test sees it learnt anew.
    const mac = macOf(GUESTS[0].ns, 'eth0');
    if (learnedDst(c, mac) !== undefined) ip('netns', 'exec', c.ns, 'bridge', 'fdb', 'del', mac, 'dev', 'vxlan100', 'self');
    assert.equal(learnedDst(c, mac), undefined);
    await converge(a, NET, [b, c]);
    assert.equal(await waitFor(() => pingOnce(GUESTS[0].ns, GUESTS[1].addr), 10_000), true, 'ping across vxlan100 within 10 s');
    assert.equal(pingOnce(GUESTS[1].ns, GUESTS[0].addr), true, 'and back');
  });

  it('guest A\'s flooded frames reached node C too (head-end replication to every other node): C learnt guest A behind node A', async () => {
    const mac = macOf(GUESTS[0].ns, 'eth0');
    assert.equal(await waitFor(() => learnedDst(NODES[2], mac) === NODES[0].addr, 5_000), true, `node C learnt ${mac} behind ${NODES[0].addr}`);
  });

  it('removing the network deletes vxlan100 and vmbr100 on every node; the guests\' links stay', async () => {
    for (const n of NODES) await converge(n, [], []);
    for (const n of NODES) {
      const names = (JSON.parse(ip('-n', n.ns, '-json', 'link', 'show')) as { ifname: string }[]).map((l) => l.ifname);
      assert.deepEqual(names.filter((x) => /^(vmbr|vxlan|vlan)[0-9]+$/.test(x)), [], `node ${n.name}`);
    }
    assert.equal(await waitFor(() => !pingOnce(GUESTS[0].ns, GUESTS[1].addr), 5_000), true, 'no path any more');
    assert.ok(ip('-n', NODES[0].ns, 'link', 'show', 'tap0'));
  });
});
