import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createExec, realClock } from '@pvc/runtime';
import {
  clusterProcesses,
  createCluster,
  HostPoweredOffError,
  ipmitoolArgs,
  lastTick,
  listRunning,
  missingPrerequisites,
  waitFor,
} from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import { waitUntil } from '../support/wait.js';

const NAME = 'pvcht';
const ZKCLI = '/usr/share/zookeeper/bin/zkCli.sh';
const VM = 'hvm1';

describe('cluster harness [root only: netns, mount/pid namespaces, libvirtd, ipmi_sim, zookeeper]', () => {
  let cluster: Cluster | undefined;
  let hv1: ClusterHost, hv2: ClusterHost, hv3: ClusterHost;
  const exec = createExec();

  before(async () => {
    // A missing prerequisite fails every test below with the list of what is missing.
    const missing = missingPrerequisites();
    if (!existsSync(ZKCLI)) missing.push(`${ZKCLI} (Debian package zookeeper)`);
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    const t0 = realClock.now();
    cluster = await createCluster({ name: NAME, hosts: 3, coordinators: 3 });
    console.log(`bring-up took ${((realClock.now() - t0) / 1000).toFixed(1)} s`);
    [hv1, hv2, hv3] = cluster.hosts as [ClusterHost, ClusterHost, ClusterHost];
  });

  after(async () => {
    await cluster?.destroy(); // no-op when the last test already destroyed it
  });

  it('runs a Zookeeper ensemble with quorum that replicates a znode between servers', async () => {
    const c = cluster!;
    assert.equal(await c.zk.hasQuorum(), true);
    const modes = (await c.zk.status()).map((s) => s.mode).sort();
    assert.deepEqual(modes, ['follower', 'follower', 'leader']);
    const znode = `/pvc-harness-${process.pid}`;
    const w = await hv1.exec(ZKCLI, ['-server', `${hv1.clusterIp}:2181`, 'create', znode, 'written-on-hv1'], { timeoutMs: 60_000 });
    assert.equal(w.exitCode, 0, w.stderr);
    // A follower applies a committed write a moment after the leader acknowledged it: read until it has.
    const r = await waitUntil(() => hv3.exec(ZKCLI, ['-server', `${hv2.clusterIp}:2181`, 'get', znode], { timeoutMs: 60_000 }), {
      what: `${znode} readable through hv2's server`,
      until: (x) => /^written-on-hv1$/m.test(x.stdout),
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    assert.match(r.stdout, /^written-on-hv1$/m, `zkCli get via hv2 said:\n${r.stdout}\n${r.stderr}`);
  });

  it("answers virsh on every host's libvirtd from another host's namespace", async () => {
    const hosts = cluster!.hosts;
    for (const [i, target] of hosts.entries()) {
      const from = hosts[(i + 1) % hosts.length]!;
      const r = await from.exec('virsh', ['-c', target.libvirtUri, 'version'], { timeoutMs: 30_000 });
      assert.equal(r.exitCode, 0, `${from.name} → ${target.libvirtUri}: ${r.stderr}`);
      assert.match(r.stdout, /Running hypervisor: QEMU/);
    }
    assert.equal((await hv2.exec('hostname', [])).stdout.trim(), 'hv2');
  });

  it('boots the tiny guest on hv1 and its heartbeat reaches the console log', async () => {
    const c = cluster!;
    const xml = join(c.workDir, `${VM}.xml`);
    await writeFile(xml, c.guest.domainXml(VM));
    const r = await hv1.virsh(['create', xml]);
    assert.equal(r.exitCode, 0, r.stderr);
    const tick = await waitFor(`heartbeat of ${VM}`, 90_000, async () => lastTick(c.guest.consoleLog(VM), VM), 500);
    assert.ok(tick >= 0);
  });

  it('live-migrates the guest hv1 → hv2 → hv3; it runs on exactly one host and keeps ticking', async () => {
    const c = cluster!;
    for (const [from, to] of [[hv1, hv2], [hv2, hv3]] as const) {
      const r = await from.virsh(['migrate', '--live', VM, to.libvirtUri, `tcp://${to.clusterIp}`], { timeoutMs: 120_000 });
      assert.equal(r.exitCode, 0, `migrate ${from.name} → ${to.name}: ${r.stderr}`);
      for (const h of c.hosts) assert.deepEqual(await listRunning(h), h === to ? [VM] : [], `domains on ${h.name}`);
      const before = lastTick(c.guest.consoleLog(VM), VM) ?? -1;
      await waitFor(`${VM} ticking on ${to.name}`, 30_000, async () => ((lastTick(c.guest.consoleLog(VM), VM) ?? -1) > before + 1 ? true : undefined), 500);
    }
  });

  it('IPMI: status is truthful, power off kills hv3 (libvirtd, guest, ZK, services), power on boots it again', async () => {
    const c = cluster!;
    const ipmi = (cmd: string[]) => hv1.exec('ipmitool', ipmitoolArgs(hv3.ipmi, cmd), { timeoutMs: 30_000, secrets: [hv3.ipmi.pass] });
    const marker = () => hv3.exec('pgrep', ['-f', 'pvc-marker']).then((r) => r.exitCode === 0);
    await hv3.startService({ name: 'marker', command: 'bash', args: ['-c', 'exec -a pvc-marker sleep 100000'] });
    await waitFor('marker service on hv3', 10_000, async () => ((await marker()) ? true : undefined));
    assert.match((await ipmi(['chassis', 'power', 'status'])).stdout, /Chassis Power is on/);

    assert.match((await ipmi(['chassis', 'power', 'off'])).stdout, /Down\/Off/);
    assert.match((await ipmi(['chassis', 'power', 'status'])).stdout, /Chassis Power is off/);
    assert.equal(await hv3.isPoweredOn(), false);
    const refused = await hv1.exec('virsh', ['-c', hv3.libvirtUri, 'version'], { timeoutMs: 30_000 });
    assert.notEqual(refused.exitCode, 0, 'libvirtd of hv3 still answers after power off');
    const left = (await clusterProcesses(exec, hv3.netns)).filter((p) => !p.includes('ipmi_sim'));
    assert.deepEqual(left, [], 'only the BMC may survive power off');
    await assert.rejects(hv3.exec('true', []), HostPoweredOffError);
    const ticks = lastTick(c.guest.consoleLog(VM), VM);
    await realClock.sleep(2_500);
    assert.equal(lastTick(c.guest.consoleLog(VM), VM), ticks, 'the guest kept ticking on a powered-off host');
    assert.equal(await c.zk.hasQuorum(), true, '2 of 3 ZK servers must keep quorum');

    assert.match((await ipmi(['chassis', 'power', 'on'])).stdout, /Up\/On/);
    assert.match((await ipmi(['chassis', 'power', 'status'])).stdout, /Chassis Power is on/);
    await hv3.waitForLibvirt(60_000);
    assert.deepEqual(await listRunning(hv3), [], 'a power cycle loses the guests');
    await c.zk.waitForAllServing(60_000);
    // Services start detached at power-on (setsid -f): wait for the marker, as after startService above.
    await waitUntil(marker, { what: 'the marker service started again at power-on', timeoutMs: 10_000, intervalMs: 250 });
    assert.equal(await marker(), true, 'host services start again at power-on');
    await hv3.stopService('marker');
    await waitFor('marker service stopped', 10_000, async () => ((await marker()) ? undefined : true));
  });

  it("setPostDelay: a power-on is 'on' at once, the host's services start only after the delay", async () => {
    const c = cluster!;
    const POST_MS = 4_000;
    const marker = () => hv2.exec('pgrep', ['-f', 'pvc-post-marker']).then((r) => r.exitCode === 0, () => false);
    await hv2.startService({ name: 'post-marker', command: 'bash', args: ['-c', 'exec -a pvc-post-marker sleep 100000'] });
    await waitFor('post-marker service on hv2', 10_000, async () => ((await marker()) ? true : undefined));
    await hv2.setPostDelay(POST_MS);
    try {
      await hv2.powerOff();
      const t0 = realClock.now();
      await hv2.powerOn({ wait: false });
      assert.equal(await hv2.isPoweredOn(), true, 'the power state is on as soon as power-on returns');
      await waitUntil(marker, { what: 'the post-marker service started after the POST delay', timeoutMs: POST_MS + 15_000, intervalMs: 100 });
      const startedAfter = realClock.now() - t0;
      assert.ok(startedAfter >= POST_MS, `services started ${startedAfter} ms after power-on, before the ${POST_MS} ms POST`);
      // A power-off during the POST: nothing of the host is left to start its services later.
      await hv2.powerOff();
      await hv2.powerOn({ wait: false });
      await hv2.powerOff();
      const waiting = await exec.run('pgrep', ['-f', `host-power.sh ${hv2.dirs.root} post-boot`]);
      assert.equal(waiting.exitCode, 1, `a POST wait outlived the power-off: ${waiting.stdout.trim()}`);
    } finally {
      await hv2.setPostDelay(0);
    }
    await hv2.powerOn();
    await c.zk.waitForAllServing(60_000);
    await hv2.stopService('post-marker');
    await waitFor('post-marker service stopped', 10_000, async () => ((await marker()) ? undefined : true));
  });

  it('cutNetwork isolates hv2 except its BMC; restoreNetwork reconnects it', async () => {
    const probe = (from: ClusterHost, ip: string, port: number) =>
      from.exec('timeout', ['3', 'bash', '-c', `exec 3<>/dev/tcp/${ip}/${port}`]).then((r) => r.exitCode === 0);
    await hv2.cutNetwork();
    assert.equal(await probe(hv1, hv2.clusterIp, 16509), false, 'libvirtd of hv2 reachable while cut');
    assert.equal(await probe(hv2, hv1.clusterIp, 2181), false, 'hv2 reaches ZK on hv1 while cut');
    const bmc = await hv1.exec('ipmitool', ipmitoolArgs(hv2.ipmi, ['chassis', 'power', 'status']), { secrets: [hv2.ipmi.pass] });
    assert.match(bmc.stdout, /Chassis Power is on/, 'the BMC network must stay up');
    await hv2.restoreNetwork();
    await waitFor('hv2 libvirtd reachable again', 30_000, async () => ((await probe(hv1, hv2.clusterIp, 16509)) ? true : undefined));
  });

  it('destroy() leaves no namespace, link, process, mount or work dir behind', async () => {
    const c = cluster!;
    cluster = undefined;
    await c.destroy();
    const ns = (await exec.run('ip', ['netns', 'list'])).stdout;
    assert.doesNotMatch(ns, new RegExp(`^${NAME}-`, 'm'));
    const links = (await exec.run('ip', ['-o', 'link', 'show'])).stdout;
    assert.doesNotMatch(links, new RegExp(`: ${NAME}-`));
    assert.deepEqual(await clusterProcesses(exec, undefined, c.workDir), []);
    assert.doesNotMatch(readFileSync('/proc/self/mountinfo', 'utf8'), new RegExp(`${NAME}-|${c.workDir}`));
    assert.equal(existsSync(c.workDir), false);
    assert.equal(existsSync(c.guest.initrd), true, 'the guest image cache is kept');
  });
});

describe('cluster harness with bare links [root only]: nothing configured on cluster/storage/upstream, a power-off clears what bring-up set', () => {
  let cluster: Cluster | undefined;
  const exec = createExec();
  const ns = (host: ClusterHost, ...args: string[]): Promise<string> =>
    exec.run('ip', ['-n', host.netns, ...args]).then((r) => r.stdout);
  const sysctl = async (host: ClusterHost, key: string): Promise<string> =>
    (await exec.run('ip', ['netns', 'exec', host.netns, 'sysctl', '-n', key])).stdout.trim();

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    cluster = await createCluster({ name: 'pvchb', hosts: 1, coordinators: 1, bareLinks: true });
  });

  after(async () => {
    await cluster?.destroy();
  });

  it('boots with bare, down links (only the BMC link is addressed); libvirtd answers on its local socket', async () => {
    const hv1 = cluster!.hosts[0]!;
    assert.equal(cluster!.bareLinks, true);
    const links = JSON.parse(await ns(hv1, '-j', 'address', 'show')) as { ifname: string; operstate: string; flags: string[]; addr_info: { family: string; local: string }[] }[];
    for (const name of ['cluster', 'storage', 'upstream']) {
      const l = links.find((x) => x.ifname === name);
      assert.ok(l, `link ${name} exists`);
      assert.deepEqual(l.addr_info.filter((a) => a.family === 'inet'), [], `${name} has no IPv4 address`);
      assert.ok(!l.flags.includes('UP'), `${name} is down`);
    }
    assert.ok(links.find((x) => x.ifname === 'ipmi')?.addr_info.some((a) => a.local === hv1.ipmiIp), 'the BMC link keeps its address');
    const r = await hv1.exec('virsh', ['-c', 'qemu:///system', 'version']);
    assert.equal(r.exitCode, 0, r.stderr);
  });

  it('power-off clears bridges, addresses, the nftables ruleset and the sysctls that bring-up sets; power-on finds bare links again', async () => {
    const hv1 = cluster!.hosts[0]!;
    // What the node's bring-up and netd would do, by hand.
    const script = [
      'ip link add brcluster type bridge && ip link set cluster master brcluster up && ip link set brcluster up',
      `ip addr add ${hv1.clusterIp}/24 dev brcluster`,
      'ip link set upstream mtu 1400 up',
      `ip addr add ${hv1.upstreamIp}/24 dev upstream`,
      'nft add table inet filter',
      'sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.conf.cluster.rp_filter=2',
    ].join(' && ');
    const before = [await sysctl(hv1, 'net.ipv4.ip_forward'), await sysctl(hv1, 'net.ipv4.conf.cluster.rp_filter')];
    const set = await exec.run('ip', ['netns', 'exec', hv1.netns, 'bash', '-c', script]);
    assert.equal(set.exitCode, 0, set.stderr);
    await hv1.powerOff();
    assert.doesNotMatch(await ns(hv1, '-o', 'link', 'show'), /brcluster/);
    assert.doesNotMatch(await ns(hv1, '-4', '-o', 'address', 'show'), new RegExp(`${hv1.clusterIp}|${hv1.upstreamIp}`));
    assert.match(await ns(hv1, '-o', 'link', 'show', 'upstream'), /mtu 1500 .*state DOWN/);
    assert.equal((await exec.run('ip', ['netns', 'exec', hv1.netns, 'nft', 'list', 'ruleset'])).stdout.trim(), '');
    assert.deepEqual([await sysctl(hv1, 'net.ipv4.ip_forward'), await sysctl(hv1, 'net.ipv4.conf.cluster.rp_filter')], before);
    assert.match(await ns(hv1, '-4', '-o', 'address', 'show', 'ipmi'), new RegExp(hv1.ipmiIp.replace(/\./g, '\\.')), 'the BMC link is kept');
    await hv1.powerOn();
    assert.equal(await hv1.isPoweredOn(), true);
  });
});
