/**
 * Client network benchmark (issue 12 item 7) on a real 3-host harness cluster with the node
 * services, hv3 primary:
 *   (a) `pvc network add` (timed from the CLI's start) → `vmbr<vni>` up on all 3 hosts, and → the
 *       primary's dnsmasq answering a DHCPINFORM sent every 50 ms from a namespace on hv2's bridge
 *       (across the VXLAN; target ≤ 2 s); then a DHCPDISCOVER → OFFER of a dynamic address (dnsmasq
 *       pings it for ~3 s first, answering no other DHCP packet meanwhile, which is why the two
 *       probes do not overlap); then `pvc network remove` → nothing of the network left on any
 *       host. Repeated `--runs` times.
 *   (b) a guest with a NIC on the network, pinged every 20 ms from the namespace on hv2: loss and
 *       longest gap across live migrations hv1 ⇄ hv3 (`pvc vm migrate --target hv3 --wait`, then
 *       `pvc vm unmigrate --wait`), `--migrations` times;
 *   (c) the same prober and one pinging the gateway across planned handovers hv3 ⇄ hv1
 *       (`pvc node primary --wait`), `--handovers` times.
 * Root only; ~4 min.
 *
 *   node --conditions=development --import tsx bench/client-networks.ts [--runs 3] [--migrations 4] [--handovers 4]
 */
import { parseArgs } from 'node:util';
import { createExec, realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { missingPrerequisites } from '../tests/cluster/harness/index.js';
import type { FailoverCluster } from '../tests/cluster/failover-scenario.js';
import { staleBuilds } from '../tests/cluster/pvc-node.js';
import {
  bridgesUp, guestRunsOn, leftovers, networkAddArgs, placeNetGuest, scenarioNet, servers, startClientNetCluster, waitLease, type NetGuest,
} from '../tests/cluster/client-network-scenario.js';
import { createProbeNamespace, DhcpProbe } from '../tests/cluster/client-net-probe.js';
import { consoleSize } from '../tests/support/guest/console.js';
import { PingProber, formatLoss, type LossFigures } from '../tests/support/ping-prober.js';
import { waitUntil } from '../tests/support/wait.js';

const exec = createExec();

const stats = (xs: readonly number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? '—' : `median ${s[Math.floor(s.length / 2)]} ms, min ${s[0]} ms, max ${s.at(-1)} ms (${s.length} runs)`;
};

/** (a) one run: add → bridges up everywhere → dnsmasq answers an INFORM, then OFFERs a dynamic address; remove → nothing left. */
async function addRun(fc: FailoverCluster, i: number): Promise<{ cli: number; bridges: number; inform?: number; offer?: number; removed: number }> {
  const net = scenarioNet(1300 + i, 120 + i, `bnet${i}`);
  const hv2 = fc.cluster.host('hv2');
  const probe = await createProbeNamespace(fc.cluster.name, hv2, `${net.prefix}.250/24`);
  const inform = new DhcpProbe(probe.netns, '52:54:00:13:00:01', 'inform', `${net.prefix}.250`);
  const discover = new DhcpProbe(probe.netns, '52:54:00:13:00:02');
  inform.start();
  try {
    await waitUntil(() => inform.firstSendAt !== undefined, { what: 'the DHCP probe sending', timeoutMs: 10_000 });
    const t0 = realClock.now();
    const added = fc.cli.ok(...networkAddArgs(net));
    const bridges = waitUntil(() => bridgesUp(fc, net), { what: `${net.bridge} up on every host`, timeoutMs: 30_000, intervalMs: 50 }).then(() => realClock.now());
    await waitUntil(async () => (await exec.run('ip', ['-n', hv2.netns, '-o', 'link', 'show', 'dev', net.bridge])).exitCode === 0, { what: `${net.bridge} on hv2`, timeoutMs: 30_000, intervalMs: 20 });
    await probe.attach(net.bridge);
    const bridgesAt = await bridges;
    await added;
    // The CLI's one transaction: the network's root key's creation time on the ZK server (the CLI's start-up not counted).
    const writtenAt = (await fc.zk.get(paths.network(net.vni).root)).stat.ctime;
    await waitUntil(() => inform.answerAt, { what: 'an ACK to the DHCPINFORM', timeoutMs: 30_000, intervalMs: 20 }).catch(() => undefined);
    // The DISCOVER only after the INFORM's answer: dnsmasq answers nothing else during its ~3 s ICMP check of a dynamic address.
    discover.start();
    await waitUntil(() => discover.answerAt, { what: 'an OFFER to the DHCPDISCOVER', timeoutMs: 30_000, intervalMs: 20 }).catch(() => undefined);
    const r = {
      cli: writtenAt - t0, bridges: bridgesAt - t0, inform: inform.answerAt && inform.answerAt - t0, offer: discover.answerAt && discover.answerAt - t0,
    };
    console.log(`(a) run ${i + 1}: network add (ZK write ${r.cli} ms after the CLI's start) → ${net.bridge} up on 3 hosts ${r.bridges} ms; → hv3's dnsmasq ACKs a DHCPINFORM from hv2's bridge after ${r.inform ?? '—'} ms (${r.inform === undefined ? '—' : r.inform - r.cli} ms after the ZK write); then OFFERs ${discover.address ?? '—'} after ${r.offer ?? '—'} ms`);
    inform.stop();
    discover.stop();
    await probe.remove();
    const t1 = realClock.now();
    await fc.cli.ok('network', 'remove', String(net.vni), '--yes');
    await waitUntil(async () => (await Promise.all(fc.cluster.hosts.map((h) => leftovers(h, net.vni)))).flat(), { what: 'nothing of the network left', timeoutMs: 60_000, intervalMs: 100, until: (l) => l.length === 0 });
    return { ...r, removed: realClock.now() - t1 };
  } finally {
    inform.stop();
    discover.stop();
    await probe.remove();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, migrations: { type: 'string', default: '4' }, handovers: { type: 'string', default: '4' } } });
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing: ${missing.join(', ')}`);
  const stale = staleBuilds();
  if (stale.length > 0) console.log(`warning: stale builds (run npx tsc -b tsconfig.json): ${stale.join(', ')}`);
  const t0 = realClock.now();
  const fc = await startClientNetCluster('cnb', (l) => console.log(`  [${((realClock.now() - t0) / 1000).toFixed(1)}s] ${l}`));
  const probers: PingProber[] = [];
  let probeNs: Awaited<ReturnType<typeof createProbeNamespace>> | undefined;
  try {
    const runs = [];
    for (let i = 0; i < Number(values.runs); i++) runs.push(await addRun(fc, i));
    console.log(`(a) network add → bridges up on 3 hosts: ${stats(runs.map((r) => r.bridges))}`);
    console.log(`(a) network add → dnsmasq answers (DHCPINFORM → ACK): ${stats(runs.flatMap((r) => (r.inform === undefined ? [] : [r.inform])))} (target ≤ 2000 ms)`);
    console.log(`(a) ZK write → dnsmasq answers: ${stats(runs.flatMap((r) => (r.inform === undefined ? [] : [r.inform - r.cli])))}; the CLI's start → its ZK write: ${stats(runs.map((r) => r.cli))}`);
    console.log(`(a) network add → dnsmasq offers a dynamic address (DISCOVER sent after the ACK): ${stats(runs.flatMap((r) => (r.offer === undefined ? [] : [r.offer])))} (dnsmasq pings the address ~3 s first)`);
    console.log(`(a) network remove → nothing left on 3 hosts: ${stats(runs.map((r) => r.removed))}`);

    const net = scenarioNet(1399, 119, 'bguest');
    const g: NetGuest = { name: 'cnb-a', uuid: 'c1399000-0000-4000-8000-00000000000a', mac: '52:54:00:13:99:0a', ip: `${net.prefix}.11` };
    await fc.cli.ok(...networkAddArgs(net));
    await fc.cli.ok('network', 'dhcp', 'add', String(net.vni), g.ip, g.name, g.mac);
    await waitUntil(() => servers(fc, net), { what: 'gateway and dnsmasq on hv3', timeoutMs: 30_000, intervalMs: 250, until: (s) => s.dnsmasq.join() === 'hv3' && s.gateway.join() === 'hv3' });
    await placeNetGuest(fc, g, net, fc.cluster.host('hv1'), `pvc.net=dhcp pvc.ping=${net.gateway}`);
    await waitLease(fc, g);
    probeNs = await createProbeNamespace(fc.cluster.name, fc.cluster.host('hv2'), `${net.prefix}.250/24`, net.bridge);
    const toGuest = new PingProber(probeNs.netns, g.ip);
    const toGateway = new PingProber(probeNs.netns, net.gateway);
    probers.push(toGuest, toGateway);
    for (const p of probers) p.start();
    await waitUntil(() => Math.min(toGuest.replies.length, toGateway.replies.length), { what: 'answers from the guest and the gateway', timeoutMs: 30_000, intervalMs: 100, until: (n) => n >= 20 });
    console.log(`prober on hv2's ${net.bridge} pings the guest ${g.ip} and the gateway ${net.gateway} every 20 ms`);

    const window = async (act: () => Promise<unknown>): Promise<{ ms: number; start: number; end: number }> => {
      await realClock.sleep(1_000);
      const start = realClock.now();
      await act();
      const done = realClock.now();
      await waitUntil(() => Math.min(toGuest.answersSince(done), toGateway.answersSince(done)), { what: 'answers again', timeoutMs: 30_000, intervalMs: 100, until: (n) => n >= 25 }).catch(() => undefined);
      return { ms: done - start, start, end: realClock.now() };
    };
    const mig: LossFigures[] = [];
    let hung: string | undefined;
    for (let i = 0; i < Number(values.migrations); i++) {
      const to = i % 2 === 0 ? 'hv3' : 'hv1';
      const off = consoleSize(fc.cluster.guest.consoleLog(g.name));
      const w = await window(async () => {
        // Back to hv1 with unmigrate: a second migrate of a migrated VM needs --force.
        await fc.cli.ok(...(to === 'hv3' ? ['vm', 'migrate', g.name, '--target', to] : ['vm', 'unmigrate', g.name]), '--wait', '--wait-timeout', '180');
        await guestRunsOn(fc, g, off).catch((err: unknown) => {
          hung = err instanceof Error ? err.message : String(err);
        });
      });
      if (hung) {
        console.log(`(b) migration ${i + 1} to ${to}: ${hung}`);
        break;
      }
      const f = toGuest.figures(w.start, w.end);
      mig.push(f);
      console.log(`(b) pvc vm ${to === 'hv3' ? `migrate ${g.name} --target hv3` : `unmigrate ${g.name}`} --wait: ${w.ms} ms; prober → guest: ${formatLoss(f)}`);
    }
    console.log(`(b) live migration, prober → guest: longest gap ${stats(mig.map((f) => f.longestGapMs))}; lost ${mig.map((f) => f.lost).join(', ')} of ${mig.map((f) => f.sent).join(', ')}`);

    const hand: { guest: LossFigures; gw: LossFigures }[] = [];
    for (let i = 0; i < Number(values.handovers); i++) {
      const to = i % 2 === 0 ? 'hv1' : 'hv3';
      const w = await window(async () => {
        await fc.cli.ok('node', 'primary', to, '--wait', '--wait-timeout', '120');
        await waitUntil(() => servers(fc, net), { what: `gateway and dnsmasq on ${to}`, timeoutMs: 30_000, intervalMs: 100, until: (s) => s.dnsmasq.join() === to && s.gateway.join() === to });
      });
      const f = { guest: toGuest.figures(w.start, w.end), gw: toGateway.figures(w.start, w.end) };
      hand.push(f);
      console.log(`(c) pvc node primary ${to} --wait (+ gateway and dnsmasq there): ${w.ms} ms; prober → gateway: ${formatLoss(f.gw)}; → guest: ${hung ? '— (guest stopped)' : formatLoss(f.guest)}`);
    }
    console.log(`(c) planned handover, prober → gateway: longest gap ${stats(hand.map((f) => f.gw.longestGapMs))}; → guest: longest gap ${stats(hand.map((f) => f.guest.longestGapMs))}`);
  } finally {
    for (const p of probers) p.stop();
    await probeNs?.remove().catch(() => undefined);
    await fc.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
