/**
 * A recovery burst against a real vmd process, a private libvirtd (libvirtd.ts) and a standalone
 * ZooKeeper: `guests` tiny TCG guests belong to hv2 (dead), and {@link BurstRig.recover} writes
 * what keepaliled's recovery writes after a fence — one transaction per VM, `gapMs` apart, moving
 * it to hv1 in `start` — then times each guest until libvirt's `Started` lifecycle event
 * (`virsh event --loop`). Used by the vmd integration test and `bench/vm-start.ts --burst`.
 * Root only. Every guest is destroyed and every process stopped by {@link BurstRig.destroy}.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import { connectZk, newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { lifecycleEvents } from '../../support/lifecycle-events.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { LibvirtTestDaemon } from './libvirtd.js';
import { startVmdProcess, type VmdProcess } from './vmd-process.js';

/** One guest's start as vmd logged it (`VM started`, with the time it took from the job's begin). */
export interface LoggedStart {
  name: string;
  beganMs: number;
  endedMs: number;
}

/** What one burst measured; times in ms of `performance.now()`. */
export interface BurstResult {
  /** When each write was sent (index = guest). */
  writes: number[];
  /** When each guest's `Started` event arrived (index = guest). */
  started: number[];
  /** From the first write to the last write's answer. */
  windowMs: number;
  /** From the first write to the last `Started`. */
  totalMs: number;
}

/** Options of {@link startBurstRig}. */
export interface BurstRigOptions {
  guests: number;
  /** Extra environment of the vmd process (e.g. UV_THREADPOOL_SIZE). */
  vmdEnv?: Record<string, string>;
  /** vmd's debug logs (`pvc.debug`). */
  debug?: boolean;
}

/** UUID of guest `i`. */
export const burstUuid = (i: number): string => `0000b5${String(i).padStart(2, '0')}-1111-2222-3333-444444444444`;
/** Name of guest `i`. */
export const burstName = (i: number): string => `burst${i}`;

/** The rig; see the module doc. */
export interface BurstRig {
  lv: LibvirtTestDaemon;
  zk: ZkClient;
  vmd: VmdProcess;
  /** Moves guests `0..n-1` to hv1 in `start`, `gapMs` apart, and waits until all run. */
  recover(n: number, gapMs: number, timeoutMs?: number): Promise<BurstResult>;
  /** Moves every guest back to hv2 and waits until vmd destroyed them all. */
  reset(): Promise<void>;
  /** vmd's `VM started` log lines so far (wall-clock ms). */
  loggedStarts(): LoggedStart[];
  /** Arrival time (performance.now) of each domain's latest `Started` event, by name; `clear` forgets them. */
  events: { readonly started: ReadonlyMap<string, number>; clear(): void };
  destroy(): Promise<void>;
}

/** Starts everything and waits until vmd is connected and has settled. */
export async function startBurstRig(o: BurstRigOptions): Promise<BurstRig> {
  const cleanups: (() => Promise<void> | void)[] = [];
  /** Runs every cleanup, newest first, even when one fails; then throws the first failure. */
  const destroy = async (): Promise<void> => {
    const failures: unknown[] = [];
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
  };
  try {
    const lv = await LibvirtTestDaemon.start();
    cleanups.push(() => lv.destroy());
    const zks = await ZkTestServer.start();
    cleanups.push(() => zks.destroy());
    const zk = await connectZk({ hosts: ['127.0.0.1'], port: zks.port, clock: realClock });
    cleanups.push(() => zk.close());
    await seed(zk, lv, o.guests);
    const events = lifecycleEvents(lv.uri);
    cleanups.push(() => events.close());
    const dir = mkdtempSync(join(tmpdir(), 'pvc-burst-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const vmd = startVmdProcess({
      dir, node: 'hv1', hosts: { hv1: '127.0.0.1' }, libvirtUri: lv.uri, env: o.vmdEnv,
      edits: [
        ['pvc.database.zookeeper.port', zks.port], ['pvc.functions.enable_storage', false], ['pvc.functions.enable_networking', false],
        ['pvc.debug', o.debug ?? false],
      ],
    });
    cleanups.push(async () => {
      vmd.child.kill('SIGTERM');
      await vmd.exited;
    });
    await waitUntil(() => /connected to libvirt/.test(vmd.output()), { what: 'vmd connected to ZK and libvirt', timeoutMs: 30_000 });
    await waitUntil(() => readRunning(zk), { what: 'vmd\'s first pass (runningdomains written)', until: (v) => v !== undefined, timeoutMs: 10_000 });
    /** Runs `fn`; a failure carries the tail of vmd's output (what it did meanwhile). */
    const withVmdLog = async <T>(fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- vmd output (tail) ---\n${vmd.output().slice(-6000)}`, { cause: err });
      }
    };
    const recover = (n: number, gapMs: number, timeoutMs = 60_000): Promise<BurstResult> => withVmdLog(async () => {
      events.clear();
      const writes: number[] = [];
      for (let i = 0; i < n; i++) {
        if (i > 0 && gapMs > 0) await realClock.sleep(gapMs);
        writes.push(performance.now());
        await zk.write([[paths.domain(burstUuid(i)).state, 'start'], [paths.domain(burstUuid(i)).node, 'hv1']]);
      }
      const t0 = writes[0] ?? 0;
      const windowMs = performance.now() - t0;
      const names = Array.from({ length: n }, (_, i) => burstName(i));
      await waitUntil(() => names.every((x) => events.started.has(x)), {
        what: `all ${n} guests started`, timeoutMs, intervalMs: 20, until: (v) => v,
      });
      const started = names.map((x) => events.started.get(x) ?? NaN);
      return { writes, started, windowMs, totalMs: Math.max(...started) - t0 };
    });
    const reset = (): Promise<void> => withVmdLog(async () => {
      for (let i = 0; i < o.guests; i++) await zk.write([[paths.domain(burstUuid(i)).node, 'hv2']]);
      await waitUntil(() => lv.running(), { what: 'every guest destroyed', until: (r) => r.length === 0, timeoutMs: 30_000, intervalMs: 100 });
    });
    return { lv, zk, vmd, recover, reset, loggedStarts: () => loggedStarts(vmd.output()), events, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}

async function readRunning(zk: ZkClient): Promise<string | undefined> {
  return zk.read(paths.node('hv1').runningDomains);
}

/** hv1 alive, hv2 dead, and the guests on hv2 in `start` (as before a recovery). */
async function seed(zk: ZkClient, lv: LibvirtTestDaemon, guests: number): Promise<void> {
  for (const p of [paths.nodes, paths.domains]) await zk.ensurePath(p);
  for (const [name, daemonState] of [['hv1', 'run'], ['hv2', 'dead']] as const) {
    const n = newNodeObject({ name, daemonMode: 'hypervisor', nowMs: realClock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(n.root, n.entries);
    await zk.write([[paths.node(name).domainState, 'ready'], [paths.node(name).daemonState, daemonState]]);
  }
  for (let i = 0; i < guests; i++) {
    const d = newDomainObject({ uuid: burstUuid(i), name: burstName(i), node: 'hv2', state: 'start', xml: lv.guestXml(burstName(i), { uuid: burstUuid(i) }) });
    await zk.createObject(d.root, d.entries);
  }
}

function loggedStarts(output: string): LoggedStart[] {
  const out: LoggedStart[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes('"VM started"')) continue;
    try {
      const j = JSON.parse(line) as { vm?: string; ms?: number; time?: string | number };
      const ended = typeof j.time === 'number' ? j.time : Date.parse(String(j.time));
      if (j.vm && typeof j.ms === 'number' && Number.isFinite(ended)) out.push({ name: j.vm, beganMs: ended - j.ms, endedMs: ended });
    } catch {
      // not a JSON log line
    }
  }
  return out;
}
