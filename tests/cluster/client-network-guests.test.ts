/**
 * Client networks end to end with real guests (issue 12 item 6): 3 hosts with the node services,
 * hv3 primary; a managed network with DHCP and a reservation per guest; guest A on hv1 and guest B
 * on hv2, each with a virtio NIC on `vmbr<vni>` (busybox udhcpc, console lease/ping lines).
 *
 * - Both get their reserved leases from hv3's dnsmasq across the VXLAN (console and
 *   `/networks/<vni>/dhcp4_leases/<mac>` in ZK), ping the gateway and each other.
 * - A prober namespace on hv2's `vmbr<vni>` pings A every 20 ms while `pvc vm migrate A --target hv3
 *   --wait` moves it live: the pings come back (loss and longest gap printed).
 * - `pvc node primary hv1 --wait`: gateway and dnsmasq move to hv1 only, both guests' next renew
 *   (SIGUSR1 every 5 s) is answered with their address, the gateway answers them again.
 * - `pvc network acl add … 'icmp type echo-request drop' --in` stops the guests' pings of each other
 *   (bridged IPv4 passes the inet forward hook: bridge-nf-call-iptables is 1 in the hosts'
 *   namespaces, printed); what happens to their pings of the gateway is printed; `acl remove`
 *   restores them.
 * - Guests stopped, `pvc network remove`: no device, chain, nft file, dnsmasq, hosts dir or pid file
 *   of the network on any host.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '@pvc/runtime';
import { leaseKeys, readKeyIfExists } from '@pvc/zk';
import { missingPrerequisites } from './harness/index.js';
import type { FailoverCluster } from './failover-scenario.js';
import { staleBuilds } from './pvc-node.js';
import { runningOn } from './migration-scenario.js';
import {
  bridgeNfCallIptables, bridgesUp, guestRunsOn, leftovers, networkAddArgs, placeNetGuest, scenarioNet, servers, startClientNetCluster, waitLease, type NetGuest,
} from './client-network-scenario.js';
import { createProbeNamespace, type ProbeNamespace } from './client-net-probe.js';
import { consoleLeases, consolePings, consoleSize, failRun } from '../support/guest/console.js';
import { PingProber, formatLoss } from '../support/ping-prober.js';
import { waitUntil } from '../support/wait.js';

const log = (l: string): void => console.log(`  [client-network-guests] ${l}`);
const NET = scenarioNet(1200, 112, 'gnet');
const A: NetGuest = { name: 'pvcng-a', uuid: 'c1200000-0000-4000-8000-00000000000a', mac: '52:54:00:12:00:0a', ip: `${NET.prefix}.11` };
const B: NetGuest = { name: 'pvcng-b', uuid: 'c1200000-0000-4000-8000-00000000000b', mac: '52:54:00:12:00:0b', ip: `${NET.prefix}.12` };
const cmdline = (other: NetGuest): string => `pvc.net=dhcp pvc.renew=5 pvc.ping=${NET.gateway},${other.ip}`;
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

describe('cluster: guests on a managed network (DHCP, VXLAN, migration, handover, ACL, removal)', { timeout: 900_000 }, () => {
  let fc: FailoverCluster | undefined;
  let probe: ProbeNamespace | undefined;
  const consoleOf = (g: NetGuest): string => fc!.cluster.guest.consoleLog(g.name);
  /** Waits for an `ok` ping from `g` to `target` printed after `from`. */
  const waitPingOk = (g: NetGuest, target: string, from: number, what: string): Promise<unknown> =>
    waitUntil(() => consolePings(consoleOf(g), g.name, target, from).some((p) => p.ok), { what, timeoutMs: 90_000, intervalMs: 250 });

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    assert.deepEqual(staleBuilds(), [], 'the node services must be built (npx tsc -b tsconfig.json)');
    fc = await startClientNetCluster('pvcng', log);
    assert.ok('modules' in fc.cluster.guest.net, `the guest image has no NIC: ${JSON.stringify(fc.cluster.guest.net)}`);
  });

  after(async () => {
    await probe?.remove().catch(() => undefined);
    await fc?.close();
  });

  it('leases from the primary across the VXLAN (console and ZK); each guest pings the gateway and the other', async () => {
    const { cli, cluster, zk } = fc!;
    await cli.ok(...networkAddArgs(NET));
    for (const g of [A, B]) await cli.ok('network', 'dhcp', 'add', String(NET.vni), g.ip, g.name, g.mac);
    await waitUntil(() => bridgesUp(fc!, NET), { what: `${NET.bridge} up on every host`, timeoutMs: 30_000, intervalMs: 200 });
    await waitUntil(() => servers(fc!, NET), { what: 'gateway and dnsmasq on hv3 only', timeoutMs: 30_000, intervalMs: 250, until: (s) => s.gateway.join() === 'hv3' && s.dnsmasq.join() === 'hv3' });
    const t0 = realClock.now();
    await placeNetGuest(fc!, A, NET, cluster.host('hv1'), cmdline(B));
    await placeNetGuest(fc!, B, NET, cluster.host('hv2'), cmdline(A));
    for (const g of [A, B]) await waitLease(fc!, g);
    log(`A on hv1 and B on hv2 started and leased ${A.ip} / ${B.ip} from hv3's dnsmasq ${secs(realClock.now() - t0)} after the first vm define`);
    for (const g of [A, B]) {
      const bound = consoleLeases(consoleOf(g), g.name).find((l) => l.event === 'bound')!;
      assert.deepEqual([bound.ip, bound.router, bound.server], [g.ip, NET.gateway, NET.gateway], g.name);
      const stored = await waitUntil(() => readKeyIfExists(zk, leaseKeys(NET.vni, g.mac).ipaddr), { what: `${g.name}'s lease in ZK`, timeoutMs: 20_000, intervalMs: 200 });
      assert.equal(stored, g.ip, `/networks/${NET.vni}/dhcp4_leases/${g.mac}/ipaddr`);
    }
    for (const [g, other] of [[A, B], [B, A]] as const) {
      await waitPingOk(g, NET.gateway, 0, `${g.name} pinging the gateway`);
      await waitPingOk(g, other.ip, 0, `${g.name} pinging ${other.name} across the VXLAN`);
    }
    log(`both guests ping the gateway ${NET.gateway} and each other (A on hv1 ↔ B on hv2) ${secs(realClock.now() - t0)} after the first vm define`);
  });

  it('a live migration of A (hv1 → hv3) keeps it reachable: loss and longest gap of a 20 ms prober', async () => {
    const { cli, cluster } = fc!;
    probe = await createProbeNamespace(cluster.name, cluster.host('hv2'), `${NET.prefix}.250/24`, NET.bridge);
    const prober = new PingProber(probe.netns, A.ip);
    prober.start();
    try {
      await waitUntil(() => prober.replies.length, { what: `20 answers from A (${A.ip}) to the prober on hv2`, timeoutMs: 30_000, intervalMs: 100, until: (n) => n >= 20 });
      const offB = consoleSize(consoleOf(B));
      const offA = consoleSize(consoleOf(A));
      const start = realClock.now();
      await cli.ok('vm', 'migrate', A.name, '--target', 'hv3', '--wait', '--wait-timeout', '180');
      const done = realClock.now();
      await guestRunsOn(fc!, A, offA);
      await waitUntil(() => prober.answersSince(done), { what: 'the prober answered by A after the migration', timeoutMs: 30_000, intervalMs: 100, until: (n) => n >= 25 });
      assert.deepEqual(await runningOn(cluster.host('hv3')), [A.uuid]);
      const f = prober.figures(start, done);
      log(`pvc vm migrate ${A.name} --target hv3 --wait: ${done - start} ms; prober on hv2 → A: ${formatLoss(f)} (gap opened ${f.gapAt - start} ms after the ask)`);
      await waitPingOk(B, A.ip, offB, `B pinging A after the migration`);
      assert.ok(f.longestGapMs < 30_000, `A unreachable for ${f.longestGapMs} ms`);
    } finally {
      prober.stop();
    }
  });

  it('a planned handover (hv3 → hv1) moves gateway and dnsmasq; both guests renew their address afterwards', async () => {
    const { cli } = fc!;
    const prober = new PingProber(probe!.netns, NET.gateway);
    prober.start();
    try {
      await waitUntil(() => prober.replies.length, { what: 'answers from the gateway to the prober', timeoutMs: 30_000, intervalMs: 100, until: (n) => n >= 20 });
      const start = realClock.now();
      await cli.ok('node', 'primary', 'hv1', '--wait', '--wait-timeout', '120');
      const done = realClock.now();
      await waitUntil(() => servers(fc!, NET), { what: 'gateway and dnsmasq on hv1 only', timeoutMs: 30_000, intervalMs: 250, until: (s) => s.gateway.join() === 'hv1' && s.dnsmasq.join() === 'hv1' });
      const moved = realClock.now();
      const offsets = new Map([A, B].map((g) => [g.name, consoleSize(consoleOf(g))]));
      await waitUntil(() => prober.answersSince(moved), { what: 'the gateway answering the prober again', timeoutMs: 30_000, intervalMs: 100, until: (n) => n >= 25 });
      log(`pvc node primary hv1 --wait: ${done - start} ms, gateway+dnsmasq on hv1 only after ${moved - start} ms; prober on hv2 → gateway: ${formatLoss(prober.figures(start, moved))}`);
      for (const g of [A, B]) {
        const renewed = await waitUntil(() => consoleLeases(consoleOf(g), g.name, offsets.get(g.name)).find((l) => l.event === 'renew'), {
          what: `${g.name}'s renew answered by hv1's dnsmasq`, timeoutMs: 60_000, intervalMs: 250,
        });
        assert.equal(renewed!.ip, g.ip, `${g.name} keeps its address`);
        await waitPingOk(g, NET.gateway, offsets.get(g.name)!, `${g.name} pinging the gateway on hv1`);
      }
      log(`after the handover both guests renewed ${A.ip} / ${B.ip} from hv1 and ping the gateway there`);
    } finally {
      prober.stop();
    }
  });

  it('an ACL dropping ICMP echo requests stops guest-to-guest pings; removing it restores them', async () => {
    const { cli, cluster } = fc!;
    const nf = await bridgeNfCallIptables(fc!);
    log(`net.bridge.bridge-nf-call-iptables in the hosts' namespaces: ${JSON.stringify(nf)}`);
    const off = new Map([A, B].map((g) => [g.name, consoleSize(consoleOf(g))]));
    const t0 = realClock.now();
    await cli.ok('network', 'acl', 'add', String(NET.vni), '-d', 'noping', '-r', 'icmp type echo-request drop', '--in');
    for (const [g, other] of [[A, B], [B, A]] as const) {
      const pings = await waitUntil(() => consolePings(consoleOf(g), g.name, other.ip, off.get(g.name)), {
        what: `${g.name}'s pings of ${other.name} failing 3 times in a row`, timeoutMs: 90_000, intervalMs: 250, until: (p) => failRun(p).longest >= 3,
      });
      log(`${g.name} → ${other.name}: ${failRun(pings).longest} failures in a row ${secs(realClock.now() - t0)} after acl add`);
    }
    // Not asserted, reported: a guest's ping of the gateway crosses its own host's bridge too, where
    // the forward hook sees it (daddr inside the network → vxlan<vni>-in) unless that host is the primary.
    await realClock.sleep(5_000);
    for (const g of [A, B]) {
      const gw = consolePings(consoleOf(g), g.name, NET.gateway, off.get(g.name));
      log(`with the ACL: ${g.name} → gateway ${gw.filter((p) => p.ok).length} ok, ${gw.filter((p) => !p.ok).length} failed`);
    }
    const rules = await Promise.all(cluster.hosts.map(async (h) => (await h.exec('nft', ['list', 'chain', 'inet', 'filter', `vxlan${NET.vni}-in`])).stdout));
    assert.ok(rules.every((r) => r.includes('icmp type echo-request drop')), 'the ACL in every host\'s chain');

    const off2 = new Map([A, B].map((g) => [g.name, consoleSize(consoleOf(g))]));
    const t1 = realClock.now();
    await cli.ok('network', 'acl', 'remove', String(NET.vni), 'noping', '--yes');
    for (const [g, other] of [[A, B], [B, A]] as const) await waitPingOk(g, other.ip, off2.get(g.name)!, `${g.name} pinging ${other.name} again`);
    log(`acl remove → both guests ping each other again after ${secs(realClock.now() - t1)}`);
  });

  it('guests stopped, pvc network remove: nothing of the network left on any host', async () => {
    const { cli, cluster } = fc!;
    await probe?.remove();
    probe = undefined;
    for (const g of [A, B]) await cli.ok('vm', 'stop', g.name, '--wait', '--wait-timeout', '120');
    const before = (await Promise.all(cluster.hosts.map((h) => leftovers(h, NET.vni)))).flat();
    assert.ok(before.some((x) => x.includes('dnsmasq pid')) && before.some((x) => x.includes('vxlan')), `the network is there before: ${before.join('; ')}`);
    const t0 = realClock.now();
    await cli.ok('network', 'remove', String(NET.vni), '--yes');
    await waitUntil(async () => (await Promise.all(cluster.hosts.map((h) => leftovers(h, NET.vni)))).flat(), {
      what: 'no device, chain, nft file, dnsmasq, hosts dir or pid file of the network on any host', timeoutMs: 60_000, intervalMs: 250, until: (l) => l.length === 0,
    });
    log(`pvc network remove → nothing left on ${cluster.hosts.length} hosts after ${realClock.now() - t0} ms (checked before: ${before.length} items)`);
  });
});
