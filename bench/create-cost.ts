/**
 * What one libvirt domain start costs on this machine, without PVC (issue 14 item 6): a private
 * libvirtd (tests/integration/vmd/libvirtd.ts) creates the harness's tiny TCG guest — 1 at a time,
 * then `--guests` at once — through `virsh create --paused`, so no guest code runs and the figures
 * are the start alone. First one traced start: how many QMP commands libvirt sent (its own debug
 * log, `qemuMonitorSend`), by command. Then, with the trace off, per round the wall time until every
 * create returned and the CPU the new QEMU processes and libvirtd spent meanwhile (from /proc); and,
 * as the failover's restart sees it, the same number of creates at once with the guests running.
 * Root only; ~1 min.
 *
 *   node --conditions=development --import tsx bench/create-cost.ts [--guests 10] [--runs 2] [--daemons 2]
 *
 * `--daemons 2`: the timed rounds spread the guests over two private libvirtds on the same cores,
 * as the failover's two targets (5 + 5); the traced start uses the first.
 *
 * Why it exists: the failover bench's 10-guest restart is bounded by this. libvirt 9.0 checks the
 * guest CPU of every x86 domain it starts with one `qom-get` per CPU property (~400, each a QMP
 * round trip that QEMU answers on its main thread: ~0.45 ms of QEMU CPU each with QEMU 7.2 here),
 * and that CPU is spent before the guest runs, whatever started it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { realClock } from '@pvc/runtime';
import { LibvirtTestDaemon, missingLibvirtPrerequisites } from '../tests/integration/vmd/libvirtd.js';
import { cpuSeconds } from './proc.js';

const run = promisify(execFile);
const { values } = parseArgs({ options: { guests: { type: 'string', default: '10' }, runs: { type: 'string', default: '2' }, daemons: { type: 'string', default: '1' } } });
const GUESTS = Number(values.guests);
const RUNS = Number(values.runs);
const DAEMONS = Math.max(1, Number(values.daemons));
const TRACE = '/tmp/pvc-create-cost-libvirtd.log';

/** CPU ms (user + system) of the processes whose command line `match`es, from /proc. */
function cpuMs(match: (cmd: string) => boolean): number {
  let t = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (match(readFileSync(`/proc/${d}/cmdline`, 'utf8'))) t += cpuSeconds(d) * 1000;
    } catch {
      // gone meanwhile
    }
  }
  return t;
}

const isLibvirtd = (cmd: string): boolean => /(^|\/)libvirtd\0/.test(cmd);

/** QMP commands libvirt sent, by command, from the debug trace since `from` (a byte offset). */
function qmpCommands(from: number): Map<string, number> {
  const text = readFileSync(TRACE, 'utf8').slice(from);
  const out = new Map<string, number>();
  for (const m of text.matchAll(/QEMU_MONITOR_SEND_MSG: mon=\S+ msg=\{"execute":"([^"]+)"/g)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + 1);
  return out;
}

let serial = 0;
interface Round {
  wallMs: number;
  qemuCpuMs: number;
  libvirtdCpuMs: number;
  /** QMP commands by name, when the trace is on. */
  qmp: Map<string, number>;
}

/** `n` creates at once, guest i on daemon i mod the number of daemons. */
async function round(lvs: readonly LibvirtTestDaemon[], n: number, paused: boolean): Promise<Round> {
  const names = Array.from({ length: n }, () => `cost${++serial}`);
  const on = (i: number): LibvirtTestDaemon => lvs[i % lvs.length]!;
  for (const [i, x] of names.entries()) {
    const uuid = `0000cc${String(serial % 100).padStart(2, '0')}-${String(i).padStart(4, '0')}-2222-3333-444444444444`;
    writeFileSync(join(on(i).dir, `${x}.xml`), on(i).guestXml(x, { uuid }), { mode: 0o600 });
  }
  const traceFrom = existsSync(TRACE) ? readFileSync(TRACE, 'utf8').length : -1;
  const lvd0 = cpuMs(isLibvirtd);
  const t0 = performance.now();
  await Promise.all(names.map((x, i) => run('virsh', ['-c', on(i).uri, 'create', join(on(i).dir, `${x}.xml`), ...(paused ? ['--paused'] : [])])));
  const wallMs = performance.now() - t0;
  const libvirtdCpuMs = cpuMs(isLibvirtd) - lvd0;
  const qemuCpuMs = cpuMs((c) => c.includes('qemu-system') && names.some((x) => c.includes(`guest=${x},`)));
  const qmp = traceFrom < 0 ? new Map<string, number>() : qmpCommands(traceFrom);
  await Promise.all(names.map((x, i) => run('virsh', ['-c', on(i).uri, 'destroy', x]).catch(() => undefined)));
  await realClock.sleep(1500);
  return { wallMs, qemuCpuMs, libvirtdCpuMs, qmp };
}

function line(label: string, n: number, r: Round): string {
  return `${label.padEnd(40)} wall ${r.wallMs.toFixed(0).padStart(5)} ms; QEMU CPU ${(r.qemuCpuMs / n).toFixed(0)} ms/start, libvirtd CPU ${(r.libvirtdCpuMs / n).toFixed(0)} ms/start`;
}

async function main(): Promise<void> {
  const missing = missingLibvirtPrerequisites();
  if (missing.length > 0) throw new Error(`prerequisites missing: ${missing.join('; ')}`);
  rmSync(TRACE, { force: true });
  const lvs: LibvirtTestDaemon[] = [];
  try {
    for (let i = 0; i < DAEMONS; i++) lvs.push(await LibvirtTestDaemon.start());
    const lv = lvs[0]!;
    const admin = `libvirtd:///system?socket=${join(lv.dir, 'sock', 'libvirt-admin-sock')}`;
    await run('virt-admin', ['-c', admin, 'daemon-log-filters', '1:qemu.qemu_monitor 3:*']);
    await run('virt-admin', ['-c', admin, 'daemon-log-outputs', `1:file:${TRACE}`]);
    await realClock.sleep(1000);
    const traced = await round([lv], 1, true);
    const total = [...traced.qmp.values()].reduce((a, b) => a + b, 0);
    const top = [...traced.qmp].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`one traced start: ${total} QMP commands (${top}); wall ${traced.wallMs.toFixed(0)} ms with the trace on`);
    await run('virt-admin', ['-c', admin, 'daemon-log-outputs', '3:file:/var/log/libvirt/libvirtd.log']);
    await run('virt-admin', ['-c', admin, 'daemon-log-filters', '3:*']);
    rmSync(TRACE, { force: true });
    const cpus = readFileSync('/proc/cpuinfo', 'utf8').match(/^processor\s*:/gm)?.length ?? 0;
    console.log(`${cpus} CPUs; libvirt ${(await run('virsh', ['-c', lv.uri, 'version'])).stdout.match(/Using library: libvirt (\S+)/)?.[1] ?? '?'} / QEMU ${(await run('qemu-system-x86_64', ['--version'])).stdout.split('\n')[0]}`);
    for (let i = 1; i <= RUNS; i++) {
      const over = DAEMONS > 1 ? ` over ${DAEMONS} libvirtds` : '';
      console.log(line(`1 paused (run ${i})`, 1, await round([lv], 1, true)));
      console.log(line(`${GUESTS} paused at once${over}`, GUESTS, await round(lvs, GUESTS, true)));
      console.log(line(`${GUESTS} running at once${over}`, GUESTS, await round(lvs, GUESTS, false)));
    }
    console.log(`floor on this machine: ${GUESTS} starts need ≥ ${GUESTS} × (QEMU + libvirtd CPU per start) / ${cpus} CPUs of wall time before any guest runs`);
  } finally {
    for (const lv of lvs) await lv.destroy();
    rmSync(TRACE, { force: true });
  }
}

await main();
