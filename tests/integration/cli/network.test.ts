// `pvc network ...` against a real Zookeeper: every subcommand in-process (`runCli`), the keys it
// writes checked raw, refusals checked to change nothing under /networks, bad data written by
// another tool shown as problems.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { nodeKeys, pair, paths, readKeyIfExists, type ZkClient } from '@pvc/zk';
import { FakeNetd } from './fake-netd.js';
import { useRig, type CliRig } from './support.js';

/** Every key under `root` with its value. */
async function tree(zk: ZkClient, root = '/networks'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (p: string): Promise<void> => {
    if (!(await zk.exists(p))) return;
    out[p] = await readRaw(zk, p);
    for (const c of (await zk.children(p)).sort()) await walk(`${p}/${c}`);
  };
  await walk(root);
  return out;
}

/** Raw value of a key (the test reads what pvc wrote, byte for byte). */
async function readRaw(zk: ZkClient, p: string): Promise<string> {
  return (await zk.get(p)).data;
}

const ADD = ['network', 'add', '100', '-d', 'clients', '-p', 'managed', '-i', '10.100.0.0/24', '-g', '10.100.0.1', '--dhcp', '--dhcp-start', '10.100.0.100', '--dhcp-end', '10.100.0.199', '--dns-server', '10.0.0.1'];

describe('pvc network', () => {
  let rig: CliRig;
  useRig((r) => (rig = r));

  it('add writes the original keys and encodings; list and info show it; JSON', async () => {
    assert.equal(await rig.ok(...ADD), 'Added managed network 100 "clients"\n');
    const t = await tree(rig.zk);
    assert.deepEqual(t, {
      '/networks': '', '/networks/100': 'clients', '/networks/100/dhcp4_end': '10.100.0.199', '/networks/100/dhcp4_flag': 'True',
      '/networks/100/dhcp4_leases': '', '/networks/100/dhcp4_reservations': '', '/networks/100/dhcp4_start': '10.100.0.100',
      '/networks/100/dhcp6_flag': 'False', '/networks/100/domain': 'clients.local', '/networks/100/firewall_rules': '',
      '/networks/100/firewall_rules/in': '', '/networks/100/firewall_rules/out': '', '/networks/100/ip4_gateway': '10.100.0.1',
      '/networks/100/ip4_network': '10.100.0.0/24', '/networks/100/ip6_gateway': 'None', '/networks/100/ip6_network': 'None',
      '/networks/100/mtu': '', '/networks/100/name_servers': '10.0.0.1', '/networks/100/nettype': 'managed',
    });
    await rig.ok('network', 'add', '200', '-d', 'vlan200', '-p', 'bridged', '-m', '1500');
    const list = await rig.pvc(['network', 'list']);
    assert.equal(list.code, 0, list.stderr);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    assert.match(header ?? '', /^VNI\s+Description\s+Type\s+MTU\s+Domain\s+IPv4 network\s+Gateway\s+DHCPv4\s+IPv6 network\s+Gateway6$/);
    assert.match(rows[0] ?? '', /^\s*100\s+clients\s+managed\s+max\s+clients\.local\s+10\.100\.0\.0\/24\s+10\.100\.0\.1\s+10\.100\.0\.100–10\.100\.0\.199\s+-\s+-$/);
    assert.match(rows[1] ?? '', /^\s*200\s+vlan200\s+bridged\s+1500\s+-\s+-/);
    assert.deepEqual((JSON.parse(await rig.ok('network', 'list', 'vlan', '-f', 'json')) as { vni: number }[]).map((n) => n.vni), [200]);
    const info = await rig.ok('network', 'info', 'clients');
    assert.match(info, /^VNI:\s+100$/m);
    assert.match(info, /^DHCPv4:\s+10\.100\.0\.100–10\.100\.0\.199$/m);
    const json = JSON.parse(await rig.ok('network', 'info', '100', '-f', 'json')) as { ip4: { gateway: string }; problems: string[] };
    assert.equal(json.ip4.gateway, '10.100.0.1');
    assert.deepEqual(json.problems, []);
  });

  it('refusals exit 2 (bad input) or 1 (clash, unknown) and write nothing', async () => {
    await rig.ok(...ADD);
    const before = await tree(rig.zk);
    const cases: [string[], number, RegExp][] = [
      [['network', 'add', '16777216', '-d', 'x', '-p', 'managed'], 2, /^pvc: VNI 16777216 is out of range: 1–16777215\n$/],
      [['network', 'add', '101', '-d', 'x', '-p', 'managed', '-i', '10.1.0.0/24', '-g', '10.2.0.1'], 2, /gateway 10\.2\.0\.1 is not a host address inside 10\.1\.0\.0\/24/],
      [['network', 'add', '101', '-d', 'x', '-p', 'managed', '-i', '10.1.0.0/24', '-g', '10.1.0.1', '--dhcp', '--dhcp-start', '10.1.0.5', '--dhcp-end', '10.1.1.5'], 2, /DHCP end 10\.1\.1\.5 is not a host address inside/],
      [['network', 'add', '101', '-d', 'clients', '-p', 'managed'], 1, /a network with description "clients" already exists \(VNI 100\)/],
      [['network', 'add', '100', '-d', 'y', '-p', 'managed'], 1, /a network with VNI 100 already exists/],
      [['network', 'add', '101', '-d', 'x', '-p', 'routed'], 2, /argument 'routed' is invalid/],
      [['network', 'remove', '100'], 2, /add --yes to confirm/],
      [['network', 'remove', 'nope', '--yes'], 1, /no network with VNI or description "nope" \(networks: 100 \(clients\)\)/],
      [['network', 'dhcp', 'add', '100', '10.100.0.5', 'h', '52:54:00:zz:00:01'], 2, /MAC address "52:54:00:zz:00:01" is not valid/],
      [['network', 'acl', 'add', '100', '-d', 'a', '-r', 'drop', '--in', '--out'], 2, /give --in or --out, not both/],
      [['network', 'modify', '100'], 2, /give at least one of/],
    ];
    for (const [args, code, re] of cases) {
      const r = await rig.pvc(args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(' '));
      assert.equal(r.stdout, '');
    }
    assert.deepEqual(await tree(rig.zk), before);
  });

  it('modify, acl and dhcp end to end; remove takes everything', async () => {
    await rig.ok(...ADD);
    assert.equal(await rig.ok('network', 'modify', 'clients', '--mtu', '1400', '--ipnet6', 'fd00:100::/64'),
      'Modified network 100: mtu=1400, ip6_network=fd00:100::/64, ip6_gateway=fd00:100::1, dhcp6_flag=True\n');
    await rig.ok('network', 'acl', 'add', '100', '-d', 'ssh', '-r', 'tcp dport 22 accept');
    await rig.ok('network', 'acl', 'add', '100', '-d', 'web', '-r', 'tcp dport 80 accept');
    assert.equal(await rig.ok('network', 'acl', 'add', '100', '-d', 'icmp', '-r', 'icmp type echo-request accept', '-o', '0'),
      'Added ACL "icmp" to network 100 (in, order 0)\n');
    await rig.ok('network', 'acl', 'add', '100', '-d', 'out-drop', '-r', 'drop', '--out');
    const acls = JSON.parse(await rig.ok('network', 'acl', 'list', '100', '--in', '-f', 'json')) as { name: string; order: number }[];
    assert.deepEqual(acls.map((a) => [a.name, a.order]), [['icmp', 0], ['ssh', 1], ['web', 2]]);
    assert.equal(await readRaw(rig.zk, '/networks/100/firewall_rules/in/web/order'), '2');
    await rig.ok('network', 'acl', 'remove', '100', 'ssh', '--yes');
    assert.equal(await readRaw(rig.zk, '/networks/100/firewall_rules/in/web/order'), '1');
    const aclTable = await rig.ok('network', 'acl', 'list', '100');
    assert.match(aclTable, /^Direction\s+Order\s+Description\s+Rule\n\s*in\s+0\s+icmp\s+icmp type echo-request accept\nin\s+1\s+web\s+tcp dport 80 accept\nout\s+0\s+out-drop\s+drop\n$/);

    assert.equal(await rig.ok('network', 'dhcp', 'add', '100', '10.100.0.10', 'web1', '52:54:00:AB:00:01'),
      'Added DHCP reservation 52:54:00:ab:00:01 → 10.100.0.10 (web1) to network 100\n');
    assert.equal(await readRaw(rig.zk, '/networks/100/dhcp4_reservations/52:54:00:ab:00:01'), 'static');
    const lease = paths.network(100).lease('52:54:00:ab:00:09');
    await rig.zk.write([[lease.root, ''], [lease.expiry, '1700003600'], [lease.ipaddr, '10.100.0.150'], [lease.hostname, 'guest'], [lease.clientId, '*']]);
    assert.match(await rig.ok('network', 'dhcp', 'list', '100'), /^MAC address\s+IP address\s+Hostname\n52:54:00:ab:00:01\s+10\.100\.0\.10\s+web1\n$/);
    assert.match(await rig.ok('network', 'dhcp', 'list', '100', '--leases'), /52:54:00:ab:00:09\s+10\.100\.0\.150\s+guest\s+2023-11-14T23:13:20Z\s+\*/);
    await rig.ok('network', 'dhcp', 'remove', '100', 'web1', '--yes');
    assert.deepEqual(JSON.parse(await rig.ok('network', 'dhcp', 'list', '100', '-f', 'json')), []);

    assert.equal(await rig.ok('network', 'remove', 'clients', '--yes'), 'Removed network 100 "clients"\n');
    assert.deepEqual(await tree(rig.zk), { '/networks': '' });
  });

  it("bad data written by another tool: the network is skipped with its key named, the others are listed", async () => {
    await rig.ok(...ADD);
    await rig.zk.write([[paths.network(101).root, 'broken']]);
    await rig.zk.write([[paths.network(101).type, 'managed'], [paths.network(101).ip4Network, '10.101.0.0/40']]);
    await rig.zk.write([[paths.network(100).mtu, 'jumbo']]);
    const list = await rig.pvc(['network', 'list']);
    assert.equal(list.code, 0);
    assert.equal(list.stdout.trimEnd().split('\n').length, 2, 'header and network 100');
    assert.match(list.stderr, /pvc: warning: bad data in Zookeeper at \/networks\/101\/ip4_network: "10\.101\.0\.0\/40": the prefix \/40 is longer than 32 bits \(network skipped\)/);
    assert.match(list.stderr, /pvc: warning: bad data in Zookeeper at \/networks\/100\/mtu: "jumbo" is not empty or an integer \(default used\)/);
    const info = await rig.pvc(['network', 'info', '101']);
    assert.equal(info.code, 1);
    assert.match(info.stderr, /^pvc: network 101 has bad data in Zookeeper and is skipped: \/networks\/101\/ip4_network: /);
    assert.equal((await rig.pvc(['network', 'remove', '100', '--yes'])).code, 0);
  });

  describe('--wait (networks_up of the running nodes that report it; a fake netd writes it)', () => {
    let netd: FakeNetd | undefined;
    const nodes = async (): Promise<void> => {
      for (const n of ['hv1', 'hv2', 'hv3']) {
        await rig.addNode(n);
        await rig.zk.write([pair(nodeKeys(n).networksUp, [])]);
      }
      await rig.addNode('hv4'); // no networks_up: an original node, or networking off → not waited for
      await rig.addNode('hv5', { daemonState: 'dead' });
      await rig.zk.write([pair(nodeKeys('hv5').networksUp, [])]); // not running → not waited for
    };
    const up = async (n: string): Promise<number[] | undefined> => readKeyIfExists(rig.zk, nodeKeys(n).networksUp);
    afterEach(() => netd?.stop());

    it('add --wait returns once every running reporting node lists the VNI; remove --wait once none does', async () => {
      await nodes();
      netd = new FakeNetd(rig.zk, ['hv1', 'hv2', 'hv3'], { stepMs: 400 }).start(); // hv3 writes ≥ 2 polls after hv2
      const add = await rig.pvc(['network', 'add', '1100', '-d', 'cnet', '-p', 'managed', '-i', '10.111.0.0/24', '-g', '10.111.0.1', '--wait']);
      const returned = Date.now();
      assert.equal(add.code, 0, add.stderr);
      assert.equal(add.stdout, 'Added managed network 1100 "cnet"\nNetwork 1100: vmbr1100 up on all 3 running nodes (hv1, hv2, hv3)\n');
      for (const n of ['hv1', 'hv2', 'hv3']) assert.deepEqual(await up(n), [1100], n);
      assert.ok((netd.writes.get('hv3')?.at ?? Infinity) <= returned, 'not before the slowest node wrote');
      assert.match(add.stderr, /network 1100 up on the nodes: vmbr1100 up on [0-2]\/3 nodes; waiting for (hv\d(, )?)+\n/, 'progress on stderr');
      assert.equal(await up('hv4'), undefined);

      const rm = await rig.pvc(['network', 'remove', 'cnet', '--yes', '--wait']);
      assert.equal(rm.code, 0, rm.stderr);
      assert.equal(rm.stdout, 'Removed network 1100 "cnet"\nNetwork 1100: vmbr1100 gone on all 3 running nodes (hv1, hv2, hv3)\n');
      for (const n of ['hv1', 'hv2', 'hv3']) assert.deepEqual(await up(n), [], n);
    });

    it('a node that never acts: exit 4 after --wait-timeout naming it; the network stays added', async () => {
      await nodes();
      netd = new FakeNetd(rig.zk, ['hv1', 'hv2', 'hv3'], { stall: ['hv3'], stepMs: 50 }).start();
      const t0 = Date.now();
      const r = await rig.pvc(['network', 'add', '1100', '-d', 'cnet', '-p', 'bridged', '--wait', '--wait-timeout', '1.5']);
      assert.equal(r.code, 4, r.stderr);
      assert.ok(Date.now() - t0 >= 1_500 && Date.now() - t0 < 6_000, `${Date.now() - t0} ms`);
      assert.match(r.stderr, /pvc: network 1100 up on the nodes: not done after 1\.5 s \(last seen: vmbr1100 up on 2\/3 nodes; waiting for hv3\)\n$/);
      assert.equal(await rig.zk.exists(paths.network(1100).root) !== undefined, true);
    });

    it('no node reports networks_up: --wait has nothing to wait on and says so; modify --wait is refused (exit 2)', async () => {
      await rig.addNode('hv1');
      const r = await rig.pvc(['network', 'add', '1100', '-d', 'cnet', '-p', 'bridged', '--wait']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'Added bridged network 1100 "cnet"\nNetwork 1100: no running node reports its networks (networks_up): nothing to wait on\n');
      const m = await rig.pvc(['network', 'modify', '1100', '--mtu', '1400', '--wait']);
      assert.equal(m.code, 2);
      assert.match(m.stderr, /^pvc: network modify has no --wait: the nodes report which networks are up \(networks_up\), not their settings/);
      assert.equal(await rig.zk.exists(paths.network(1100).mtu) !== undefined && (await rig.zk.get(paths.network(1100).mtu)).data, '', 'nothing written');
    });
  });
});
