/**
 * VM start latency (issue 4 item 10): on one harness host (real libvirtd, TCG guest, real ZK) with
 * a real vmd running, 50 times: write `state=start` for a stopped guest assigned to hv1 and time
 * until libvirt reports it started; in the same run, interleaved, 50 direct `createXML` of the
 * same XML (through @unraid/libvirt, the binding vmd uses; another name/uuid so vmd leaves it
 * alone). Both are timed the same way: until the `Started` lifecycle event of a
 * `virsh event --loop` stream arrives. Prints p50/p99 of both and the overhead (ms and ratio).
 * Root only; ~9 min on 2 cores (a TCG start and stop per run).
 *
 *   node --conditions=development --import tsx bench/vm-start.ts [--runs 50]
 *
 * `--burst` (issue 14 item 6): no harness cluster; a real vmd process, a private libvirtd
 * (tests/integration/vmd/libvirtd.ts) and a standalone ZooKeeper. Each run writes what
 * keepaliled's recovery writes after a fence — `state=start node=hv1` for `--guests` VMs, one
 * transaction each, `--gap` ms apart — and times each guest until its `Started` event; then the
 * same for 1 guest; then, as the floor libvirt itself sets on this machine, the same number of
 * direct createXML calls at once through the binding (own connection each). Prints the medians
 * over `--runs` (default 3), total − write window, and the ratios N guests / 1 guest. vmd runs
 * with libuv's default 4 pool threads (as deployed) unless `--vmd-uv <n>`; the direct calls use
 * this process's pool, so run the bench itself with UV_THREADPOOL_SIZE=16 for an unconstrained floor.
 *
 *   UV_THREADPOOL_SIZE=16 node --conditions=development --import tsx bench/vm-start.ts --burst \
 *     [--guests 10] [--gap 5] [--runs 3] [--vmd-uv 16]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Hypervisor as Libvirt } from '@unraid/libvirt';
import { realClock } from '@pvc/runtime';
import { connectZk, newDomainObject, newNodeObject, paths } from '@pvc/zk';
import { createCluster, missingPrerequisites, waitFor } from '../tests/cluster/harness/index.js';
import { startVmdProcess } from '../tests/integration/vmd/vmd-process.js';
import { burstName, startBurstRig, type BurstRig } from '../tests/integration/vmd/burst-rig.js';
import { lifecycleEvents } from '../tests/support/lifecycle-events.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' }, burst: { type: 'boolean', default: false },
    guests: { type: 'string', default: '10' }, gap: { type: 'string', default: '5' }, 'vmd-uv': { type: 'string', default: '4' },
  },
});
const RUNS = Number(values.runs ?? (values.burst ? 3 : 50));
const VMD_UUID = '000000b1-1111-2222-3333-444444444444';
const DIRECT_UUID = '000000b2-1111-2222-3333-444444444444';
const sleep = (ms: number): Promise<void> => realClock.sleep(ms);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

async function main(): Promise<void> {
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`missing prerequisites: ${missing.join(', ')}`);
  const cluster = await createCluster({ name: 'vmsb', hosts: 1, coordinators: 1 });
  const hv1 = cluster.hosts[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'pvc-bench-start-'));
  const zk = await connectZk({ hosts: cluster.zk.connectString.split(','), clock: realClock });
  const vmd = startVmdProcess({ dir, node: 'hv1', hosts: { hv1: hv1.clusterIp }, libvirtUri: hv1.libvirtUri });
  const lv = new Libvirt({ uri: hv1.libvirtUri });
  const events = lifecycleEvents(hv1.libvirtUri);
  try {
    for (const p of [paths.nodes, paths.domains]) await zk.ensurePath(p);
    const n = newNodeObject({ name: 'hv1', daemonMode: 'coordinator', nowMs: realClock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(n.root, n.entries);
    await zk.write([[paths.node('hv1').domainState, 'ready'], [paths.node('hv1').daemonState, 'run']]);
    const vmdXml = cluster.guest.domainXml('bench-vmd', { uuid: VMD_UUID, memoryMiB: 96 });
    const directXml = cluster.guest.domainXml('bench-direct', { uuid: DIRECT_UUID, memoryMiB: 96 });
    const d = newDomainObject({ uuid: VMD_UUID, name: 'bench-vmd', node: 'hv1', state: 'stop', xml: vmdXml });
    await zk.createObject(d.root, d.entries);
    await lv.connectOpen();
    await waitFor('vmd connected to ZK', 30_000, async () => (/connected to libvirt/.test(vmd.output()) ? true : undefined), 200);
    await sleep(2000);
    const viaVmd: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let started = events.next('bench-vmd', 'Started');
      let t0 = performance.now();
      await zk.write([[paths.domain(VMD_UUID).state, 'start']]);
      viaVmd.push((await started) - t0);
      const stopped = events.next('bench-vmd', 'Stopped');
      await zk.write([[paths.domain(VMD_UUID).state, 'stop']]);
      await stopped;
      await sleep(500 + Math.random() * 1500); // vmd idle at a random point of its 2 s resync period

      started = events.next('bench-direct', 'Started');
      t0 = performance.now();
      await lv.domainCreateXML(directXml);
      direct.push((await started) - t0);
      const dom = await lv.domainLookupByUUIDString(DIRECT_UUID);
      const stopped2 = events.next('bench-direct', 'Stopped');
      await dom.destroy();
      await stopped2;
      await sleep(300);
      if ((i + 1) % 10 === 0) process.stdout.write(`${i + 1}/${RUNS}\n`);
    }
    const f = (x: number): string => x.toFixed(1);
    const [v50, v99, d50, d99] = [pct(viaVmd, 50), pct(viaVmd, 99), pct(direct, 50), pct(direct, 99)];
    process.stdout.write(
      `\nruns ${RUNS}\n` +
        `via vmd (state=start written → Started event): p50 ${f(v50)} ms, p99 ${f(v99)} ms, min ${f(Math.min(...viaVmd))}, max ${f(Math.max(...viaVmd))}\n` +
        `direct createXML (call → Started event):        p50 ${f(d50)} ms, p99 ${f(d99)} ms, min ${f(Math.min(...direct))}, max ${f(Math.max(...direct))}\n` +
        `overhead p50: ${f(v50 - d50)} ms, ratio ${(v50 / d50).toFixed(2)}x; p99: ${f(v99 - d99)} ms, ratio ${(v99 / d99).toFixed(2)}x\n`,
    );
  } finally {
    events.close();
    await zk.write([[paths.domain(VMD_UUID).state, 'stop']]).catch(() => undefined);
    await sleep(1000);
    vmd.child.kill('SIGTERM');
    await vmd.exited;
    for (const u of [VMD_UUID, DIRECT_UUID]) await hv1.virsh(['destroy', u]).catch(() => undefined);
    await lv.connectClose().catch(() => undefined);
    await zk.close();
    await cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** N direct createXML at once (a connection each), timed like the burst: call → `Started` event. */
async function directCreates(rig: BurstRig, n: number): Promise<number> {
  rig.events.clear();
  const names = Array.from({ length: n }, (_, i) => `direct${i}`);
  const conns = await Promise.all(names.map(async () => {
    const c = new Libvirt({ uri: rig.lv.uri });
    await c.connectOpen();
    return c;
  }));
  try {
    const t0 = performance.now();
    await Promise.all(names.map((name, i) => conns[i]!.domainCreateXML(rig.lv.guestXml(name, { uuid: `0000d1${String(i).padStart(2, '0')}-1111-2222-3333-444444444444` }))));
    await waitFor(`${n} direct guests started`, 60_000, async () => (names.every((x) => rig.events.started.has(x)) ? true : undefined), 20);
    return Math.max(...names.map((x) => rig.events.started.get(x) ?? NaN)) - t0;
  } finally {
    // The Domain objects are held until every destroy returned: the binding keeps no reference.
    const doms = await Promise.all(names.map((name) => conns[0]!.domainLookupByName(name).catch(() => undefined)));
    await Promise.all(doms.map((d) => d?.destroy().catch(() => undefined)));
    doms.length = 0;
    for (const c of conns) await c.connectClose().catch(() => undefined);
  }
}

const median = (xs: number[]): number => pct(xs, 50);

async function burst(): Promise<void> {
  const guests = Number(values.guests);
  const gap = Number(values.gap);
  const rig = await startBurstRig({ guests, vmdEnv: { UV_THREADPOOL_SIZE: values['vmd-uv'] } });
  const one: number[] = [];
  const many: number[] = [];
  const manyAfterWindow: number[] = [];
  const d1: number[] = [];
  const dn: number[] = [];
  try {
    await sleep(2000);
    for (let i = 0; i < RUNS; i++) {
      const m = await rig.recover(guests, gap);
      many.push(m.totalMs);
      manyAfterWindow.push(m.totalMs - m.windowMs);
      const ups = m.started.map((t) => (t - (m.writes[0] ?? 0)).toFixed(0)).join(' ');
      process.stdout.write(`run ${i + 1}: ${guests} guests, window ${m.windowMs.toFixed(0)} ms, up at ${ups} ms, total ${m.totalMs.toFixed(0)} ms\n`);
      await rig.reset();
      await sleep(1500);
      one.push((await rig.recover(1, 0)).totalMs);
      await rig.reset();
      await sleep(1500);
      d1.push(await directCreates(rig, 1));
      await sleep(1500);
      dn.push(await directCreates(rig, guests));
      await sleep(1500);
    }
    const f = (x: number): string => x.toFixed(0);
    const vRatio = median(many) / median(one);
    const dRatio = median(dn) / median(d1);
    process.stdout.write(
      `\nmedians over ${RUNS} runs (${guests} guests written ${gap} ms apart; ${burstName(0)}…; ` +
        `libuv pool threads: vmd ${values['vmd-uv']}, direct ${process.env.UV_THREADPOOL_SIZE ?? '4'}; load ${loadavg()[0]?.toFixed(1)}):\n` +
        `via vmd:  1 guest ${f(median(one))} ms; ${guests} guests ${f(median(many))} ms (total − window ${f(median(manyAfterWindow))} ms); ratio ${vRatio.toFixed(2)}x\n` +
        `direct createXML at once: 1 guest ${f(median(d1))} ms; ${guests} guests ${f(median(dn))} ms; ratio ${dRatio.toFixed(2)}x\n` +
        `vmd / direct: 1 guest ${(median(one) / median(d1)).toFixed(2)}x; ${guests} guests ${(median(many) / median(dn)).toFixed(2)}x\n`,
    );
  } finally {
    await rig.destroy();
  }
}

await (values.burst ? burst() : main());
