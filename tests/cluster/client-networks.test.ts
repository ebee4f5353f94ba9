/**
 * Client networks on the real cluster (issue 12 items 1, 3 and 4, what is wired so far): 3 hosts
 * with bare links and the node services; `pvc network add` of a managed network makes netd on
 * every host create `vxlan<vni>` (VXLAN id, port 4789, over `brcluster`) in `vmbr<vni>` with one
 * flooding entry per other host, and load the network's nft chains; an ACL added with `pvc network
 * acl add` appears in the chain; `pvc network modify --mtu` applies live; `pvc network remove`
 * leaves no device and no chain behind on any host. Prints the time from `network add` to every
 * host's bridge up. `network add|remove --wait` return only once every host's `networks_up` (our
 * key, written by netd) lists the VNI / none does; `vm define` refuses a VM whose `vmbr<vni>` no
 * host has up, naming each host, and places one whose network is up.
 *
 * DHCP (item 2): the network has a DHCP range; the primary holds the gateway on its `vmbr<vni>` and
 * runs the network's dnsmasq. A "guest" — a namespace whose veth is a port of `vmbr<vni>` on a host
 * that is not primary — gets a lease with busybox udhcpc across the VXLAN, the lease appears in
 * Zookeeper under `dhcp4_leases/<mac>`, and the guest pings the gateway. After `pvc node primary
 * <other>` the gateway and dnsmasq are on the new primary only, and a renewal gets the same address.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leaseKeys, nodeKeys, readKeyIfExists } from '@pvc/zk';
import { createExec, realClock } from '@pvc/runtime';
import type { ClusterHost } from './harness/index.js';
import { missingPrerequisites } from './harness/index.js';
import { startFailoverCluster, type FailoverCluster } from './failover-scenario.js';
import { staleBuilds } from './pvc-node.js';
import { udhcpcOnce, writeUdhcpcScript } from '../support/udhcpc.js';
import { waitUntil } from '../support/wait.js';

const SETTINGS = { keepaliveInterval: 1, fenceIntervals: 5 };
const VNI = 1100;
const log = (l: string): void => console.log(`  [client-networks] ${l}`);
const GUEST = 'pvccn-guest';
const GUEST_MAC = '52:54:00:11:00:01';

const run = (cmd: string, ...args: string[]): string => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
};

interface HostView {
  bridge?: { mtu: number; up: boolean };
  vxlan?: { mtu: number; master?: string; id?: number; port?: number; link?: string };
  flood: string[];
  chains: string[];
  aclRules: string[];
}

describe('cluster: client networks follow /networks on every host', { timeout: 300_000 }, () => {
  let fc: FailoverCluster | undefined;
  const exec = createExec();

  const view = async (h: ClusterHost): Promise<HostView> => {
    const sh = async (cmd: string, ...args: string[]): Promise<string> => (await exec.run('ip', ['netns', 'exec', h.netns, cmd, ...args])).stdout;
    const links = JSON.parse((await sh('ip', '-json', '-d', 'link', 'show')) || '[]') as {
      ifname: string; mtu: number; flags: string[]; master?: string; link?: string;
      linkinfo?: { info_kind?: string; info_data?: { id?: number; port?: number; link?: string } };
    }[];
    const br = links.find((l) => l.ifname === `vmbr${VNI}`);
    const vx = links.find((l) => l.ifname === `vxlan${VNI}`);
    const fdb = JSON.parse((await sh('bridge', '-json', 'fdb', 'show', 'dev', `vxlan${VNI}`).catch(() => '[]')) || '[]') as { mac: string; dst?: string }[];
    const ruleset = await sh('nft', 'list', 'ruleset');
    return {
      bridge: br && { mtu: br.mtu, up: br.flags.includes('UP') },
      vxlan: vx && { mtu: vx.mtu, master: vx.master, id: vx.linkinfo?.info_data?.id, port: vx.linkinfo?.info_data?.port, link: vx.linkinfo?.info_data?.link },
      flood: fdb.filter((e) => e.mac === '00:00:00:00:00:00' && e.dst).map((e) => e.dst!).sort(),
      chains: [...ruleset.matchAll(/chain (vxlan\d+-(?:in|out))/g)].map((m) => m[1]!),
      aclRules: [...ruleset.matchAll(/icmp type echo-request drop/g)].map((m) => m[0]),
    };
  };

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    assert.deepEqual(staleBuilds(), [], 'the node services must be built (npx tsc -b tsconfig.json)');
    fc = await startFailoverCluster('pvccn', SETTINGS, log);
  });

  after(async () => {
    spawnSync('ip', ['netns', 'del', GUEST]);
    await fc?.close();
  });

  /** Hosts holding the gateway on vmbr<vni>, and hosts running the network's dnsmasq. */
  const servers = async (gateway: string): Promise<{ gateway: string[]; dnsmasq: string[] }> => {
    const out = { gateway: [] as string[], dnsmasq: [] as string[] };
    for (const h of fc!.cluster.hosts) {
      const addrs = (await exec.run('ip', ['-n', h.netns, '-4', '-o', 'address', 'show', 'dev', `vmbr${VNI}`])).stdout;
      if (addrs.includes(` ${gateway}/`)) out.gateway.push(h.name);
      // dnsmasq's DHCP socket (bound to the bridge: bind-interfaces).
      const udp = (await exec.run('ip', ['netns', 'exec', h.netns, 'ss', '-H', '-l', '-n', '-u', '-p', 'sport = :67'])).stdout;
      if (/dnsmasq/.test(udp)) out.dnsmasq.push(h.name);
    }
    return out;
  };

  it('add → devices and chains on every host; ACL; live MTU; remove → nothing left', async () => {
    const { cluster, cli } = fc!;
    const hosts = cluster.hosts;
    const t0 = realClock.now();
    const added = await cli.run(['network', 'add', String(VNI), '-d', 'cnet', '-p', 'managed', '-i', '10.111.0.0/24', '-g', '10.111.0.1',
      '--dhcp', '--dhcp-start', '10.111.0.100', '--dhcp-end', '10.111.0.199', '--wait', '--wait-timeout', '60']);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, new RegExp(`^Network ${VNI}: vmbr${VNI} up on all ${hosts.length} running nodes \\(`, 'm'));
    log(`pvc network add --wait → every host's networks_up lists ${VNI}: ${added.ms} ms`);
    // --wait returned: every host's netd must already have written it (no further waiting here).
    assert.deepEqual(await networksUp(), hosts.map(() => [VNI]), 'networks_up of every host once add --wait returned');
    await waitUntil(async () => (await Promise.all(hosts.map(view))).every((v) => v.bridge?.up === true && v.vxlan?.master === `vmbr${VNI}`), {
      what: `vmbr${VNI} with vxlan${VNI} up on every host`, timeoutMs: 30_000, intervalMs: 100,
    });
    log(`pvc network add → vmbr${VNI} and vxlan${VNI} up on all ${hosts.length} hosts: ${realClock.now() - t0} ms`);
    await placementSkipsMissingNetworks();
    for (const h of hosts) {
      const v = await view(h);
      assert.equal(v.vxlan?.id, VNI, h.name);
      assert.equal(v.vxlan?.port, 4789, h.name);
      assert.equal(v.vxlan?.mtu, 1450, `${h.name}: cluster MTU 1500 − 50`);
      assert.deepEqual(v.flood, hosts.filter((o) => o !== h).map((o) => o.clusterIp).sort(), `${h.name}: one flooding entry per other host`);
    }
    await waitUntil(async () => (await Promise.all(hosts.map(view))).every((v) => v.chains.includes(`vxlan${VNI}-in`) && v.chains.includes(`vxlan${VNI}-out`)), {
      what: `chains vxlan${VNI}-in/-out on every host`, timeoutMs: 20_000, intervalMs: 200,
    });

    await dhcpAcrossVxlan();

    await cli.ok('network', 'acl', 'add', String(VNI), '-d', 'noping', '-r', 'icmp type echo-request drop', '--in');
    await waitUntil(async () => (await Promise.all(hosts.map(view))).every((v) => v.aclRules.length === 1), {
      what: 'the ACL in the chain on every host', timeoutMs: 20_000, intervalMs: 200,
    });

    await cli.ok('network', 'modify', String(VNI), '--mtu', '1400');
    await waitUntil(async () => (await Promise.all(hosts.map(view))).every((v) => v.vxlan?.mtu === 1400 && v.bridge?.mtu === 1400), {
      what: 'MTU 1400 on both devices on every host', timeoutMs: 20_000, intervalMs: 200,
    });

    const removed = await cli.run(['network', 'remove', String(VNI), '--yes', '--wait', '--wait-timeout', '60']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(await networksUp(), hosts.map(() => []), 'networks_up of every host once remove --wait returned');
    log(`pvc network remove --wait → no host lists ${VNI}: ${removed.ms} ms`);
    await waitUntil(async () => (await Promise.all(hosts.map(view))).every((v) => !v.bridge && !v.vxlan && v.chains.length === 0)
      && (await servers('10.111.0.1')).dnsmasq.length === 0, {
      what: 'no device, no chain and no dnsmasq of the network on any host', timeoutMs: 30_000, intervalMs: 200,
    });
  });

  /** Every host's `networks_up` (our key, written by its netd), in host order; undefined = absent. */
  async function networksUp(): Promise<(number[] | undefined)[]> {
    return Promise.all(fc!.cluster.hosts.map((h) => readKeyIfExists(fc!.zk, nodeKeys(h.name).networksUp)));
  }

  /** `pvc vm define` places a VM only where its vmbr<vni> networks are up (nothing is started). */
  async function placementSkipsMissingNetworks(): Promise<void> {
    const { cli, cluster } = fc!;
    const dir = mkdtempSync(join(tmpdir(), 'pvccn-define-'));
    const xml = (bridge: string): string => `<domain type='qemu'><name>cn-place</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>`
      + `<os><type arch='x86_64'>hvm</type></os><devices><interface type='bridge'><mac address='52:54:00:11:00:99'/>`
      + `<source bridge='${bridge}'/><model type='virtio'/></interface></devices></domain>`;
    try {
      writeFileSync(join(dir, 'missing.xml'), xml('vmbr1999'));
      const refused = await cli.run(['vm', 'define', join(dir, 'missing.xml')]);
      assert.equal(refused.code, 1, refused.stdout);
      for (const h of cluster.hosts) assert.match(refused.stderr, new RegExp(`${h.name}: lacks network 1999 \\(vmbr1999\\)`), h.name);
      writeFileSync(join(dir, 'present.xml'), xml(`vmbr${VNI}`));
      assert.match(await cli.ok('vm', 'define', join(dir, 'present.xml')), /cn-place/);
      await cli.ok('vm', 'undefine', 'cn-place', '--yes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The DHCP part: lease across the VXLAN from the primary's dnsmasq, ZK lease, handover, renewal. */
  async function dhcpAcrossVxlan(): Promise<void> {
    const { cluster, cli, zk } = fc!;
    const primary = fc!.primary;
    await waitUntil(async () => {
      const s = await servers('10.111.0.1');
      return s.gateway.join() === primary && s.dnsmasq.join() === primary;
    }, { what: `gateway and dnsmasq of network ${VNI} on the primary ${primary} only`, timeoutMs: 30_000, intervalMs: 250 });
    const host = cluster.hosts.find((h) => h.name !== primary)!;
    spawnSync('ip', ['netns', 'del', GUEST]);
    run('ip', 'netns', 'add', GUEST);
    run('ip', 'link', 'add', 'gst0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', GUEST);
    run('ip', 'link', 'set', 'gst0', 'netns', host.netns);
    run('ip', '-n', host.netns, 'link', 'set', 'gst0', 'master', `vmbr${VNI}`, 'up');
    run('ip', '-n', GUEST, 'link', 'set', 'eth0', 'address', GUEST_MAC);
    run('ip', '-n', GUEST, 'link', 'set', 'eth0', 'up');
    run('ip', '-n', GUEST, 'link', 'set', 'lo', 'up');
    const dir = mkdtempSync(join(tmpdir(), 'pvccn-'));
    try {
      const script = writeUdhcpcScript(dir);
      const events = join(dir, 'events');
      const t0 = realClock.now();
      const leased = (await waitUntil(() => udhcpcOnce(GUEST, script, events), { what: `a DHCP lease for the guest on ${host.name}`, timeoutMs: 60_000, intervalMs: 500 }))!;
      log(`guest on ${host.name} leased ${leased} from ${primary}'s dnsmasq across the VXLAN in ${realClock.now() - t0} ms`);
      assert.match(leased, /^10\.111\.0\.1\d\d$/);
      const lease = leaseKeys(VNI, GUEST_MAC);
      const stored = await waitUntil(async () => readKeyIfExists(zk, lease.ipaddr), { what: 'the lease in Zookeeper', timeoutMs: 15_000, intervalMs: 200 });
      assert.equal(stored, leased);
      run('ip', 'netns', 'exec', GUEST, 'ping', '-c', '1', '-W', '2', '10.111.0.1');

      const other = cluster.hosts.find((h) => h.name !== primary && h.name !== host.name)!;
      await cli.ok('node', 'primary', other.name, '--wait');
      await waitUntil(async () => {
        const s = await servers('10.111.0.1');
        return s.gateway.join() === other.name && s.dnsmasq.join() === other.name;
      }, { what: `gateway and dnsmasq on the new primary ${other.name} only`, timeoutMs: 30_000, intervalMs: 250 });
      const renewed = await waitUntil(() => udhcpcOnce(GUEST, script, events, ['-r', leased]), { what: 'a renewal from the new primary', timeoutMs: 60_000, intervalMs: 500 });
      assert.equal(renewed, leased, 'the same address after the handover');
      run('ip', 'netns', 'exec', GUEST, 'ping', '-c', '1', '-W', '2', '10.111.0.1');
      log(`after the handover to ${other.name}: renewed ${renewed}, gateway answers`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
