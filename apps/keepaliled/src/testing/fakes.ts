/**
 * Fakes of keepaliled's own ports ({@link Peers}, {@link HostStats}, {@link SelfReset}) for unit
 * tests and the simulator: time from a Clock (a VirtualClock), failure knobs that may change
 * between calls, and a record of every call. The Zookeeper and IPMI fakes live in their libraries
 * (`@pvc/zk/testing`, `@pvc/ipmi`).
 *
 * @module
 */
import { AbortedError, createLogger, flushMicrotasks, type Clock, type Logger, type VirtualClock } from '@pvc/runtime';
import type { NodeResources } from '@pvc/rpc';
import type { HostStats, MemoryFigures, PeerCallOptions, Peers, SelfReset } from '../ports.js';

/** The calls of {@link Peers}. */
export type PeerOp = 'resources' | 'networkStats' | 'storageStats' | 'stopAllVms' | 'setPrimaryDuties' | 'flushRbdLocks';

/**
 * How one peer call behaves: `ok` answers after `latencyMs`; `fail` rejects; `hang` never answers
 * on its own. Every call, like a gRPC call, is cut at its `deadlineMs` (DEADLINE_EXCEEDED) unless
 * `ignoreDeadline` is set (a port that breaks its contract), and always at its signal.
 */
export type PeerMode = 'ok' | 'fail' | 'hang';

/** Knobs of {@link FakePeers}; change them at any time. */
export interface FakePeersKnobs {
  mode?: Partial<Record<PeerOp, PeerMode>>;
  latencyMs?: Partial<Record<PeerOp, number>>;
  /** Calls run to the end (or forever) whatever their deadline says: a port breaking its contract. */
  ignoreDeadline?: boolean;
  /** `flushRbdLocks` reports these images as failed. */
  rbdFailures?: Set<string>;
  /** `stopAllVms` reports these VMs as failed. */
  stopFailures?: Set<string>;
}

/** One recorded call. `done` is filled when it ends: `ok`, or the error message. */
export interface PeerCall {
  op: PeerOp;
  at: number;
  args: unknown[];
  done?: { at: number; result: 'ok' | string };
}

/**
 * A fake of the node's peers (vmd, netd, cephd). Figures are plain fields; `order` (shared between
 * several fakes when given the same array) records primary-duty switches as `"<name> duties on|off"`
 * in the order they complete, so a test can check the lock-step of a handover across nodes.
 */
export class FakePeers implements Peers {
  readonly calls: PeerCall[] = [];
  knobs: FakePeersKnobs;
  resourcesValue: NodeResources = { runningDomains: [], memAllocMib: 0, memProvMib: 0, vcpuAlloc: 0 };
  networkValue = { statsJson: '{}', networkCount: 0 };
  storageValue = { enabled: false, osdCount: 0 };
  /** VMs `stopAllVms` reports as stopped (those not in `stopFailures`). */
  runningVms: string[] = [];
  /** Whether the primary duties are on, as the last completed call left them. */
  dutiesOn = false;
  readonly name: string;
  readonly order: string[];

  constructor(
    private readonly clock: Clock,
    opts: { name?: string; order?: string[]; knobs?: FakePeersKnobs } = {},
  ) {
    this.name = opts.name ?? 'node';
    this.order = opts.order ?? [];
    this.knobs = { ...opts.knobs };
  }

  /** Recorded calls of one kind. */
  callsOf(op: PeerOp): PeerCall[] {
    return this.calls.filter((c) => c.op === op);
  }

  resources(opts: PeerCallOptions): Promise<NodeResources> {
    return this.call('resources', [], opts, () => structuredClone(this.resourcesValue));
  }

  networkStats(opts: PeerCallOptions): Promise<{ statsJson: string; networkCount: number }> {
    return this.call('networkStats', [], opts, () => ({ ...this.networkValue }));
  }

  storageStats(opts: PeerCallOptions): Promise<{ enabled: boolean; osdCount: number }> {
    return this.call('storageStats', [], opts, () => ({ ...this.storageValue }));
  }

  stopAllVms(reason: string, opts: PeerCallOptions): Promise<{ stopped: string[]; failed: string[] }> {
    return this.call('stopAllVms', [reason], opts, () => {
      const failed = this.runningVms.filter((vm) => this.knobs.stopFailures?.has(vm));
      const stopped = this.runningVms.filter((vm) => !failed.includes(vm));
      this.runningVms = failed;
      return { stopped, failed };
    });
  }

  setPrimaryDuties(on: boolean, reason: string, opts: PeerCallOptions): Promise<void> {
    return this.call('setPrimaryDuties', [on, reason], opts, () => {
      this.dutiesOn = on;
      this.order.push(`${this.name} duties ${on ? 'on' : 'off'}`);
    });
  }

  flushRbdLocks(images: readonly string[], deadNode: string, opts: PeerCallOptions): Promise<{ flushed: string[]; failed: string[] }> {
    return this.call('flushRbdLocks', [[...images], deadNode], opts, () => {
      const failed = images.filter((i) => this.knobs.rbdFailures?.has(i)).map((i) => `${i}: rbd lock remove failed`);
      return { flushed: images.filter((i) => !this.knobs.rbdFailures?.has(i)), failed };
    });
  }

  private async call<T>(op: PeerOp, args: unknown[], opts: PeerCallOptions, answer: () => T): Promise<T> {
    const rec: PeerCall = { op, at: this.clock.now(), args };
    this.calls.push(rec);
    const mode = this.knobs.mode?.[op] ?? 'ok';
    const latency = mode === 'hang' ? Infinity : (this.knobs.latencyMs?.[op] ?? 0);
    const bound = this.knobs.ignoreDeadline ? Infinity : opts.deadlineMs;
    try {
      await this.wait(Math.min(latency, bound), opts.signal);
      if (latency > bound) throw new Error(`${op}: DEADLINE_EXCEEDED after ${bound} ms`);
      if (mode === 'fail') throw new Error(`${op}: UNAVAILABLE (peer down)`);
      const value = answer();
      rec.done = { at: this.clock.now(), result: 'ok' };
      return value;
    } catch (err) {
      rec.done = { at: this.clock.now(), result: err instanceof Error ? err.message : String(err) };
      throw err;
    }
  }

  private wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (ms === 0) return Promise.resolve();
    if (Number.isFinite(ms)) return this.clock.sleep(ms, signal);
    return new Promise((_resolve, reject) => {
      if (signal?.aborted) reject(new AbortedError('peer call', signal.reason));
      signal?.addEventListener('abort', () => reject(new AbortedError('peer call', signal.reason)), { once: true });
    });
  }
}

/** A fake {@link HostStats}: settable figures; `hang` never answers, `fail` rejects. */
export class FakeHostStats implements HostStats {
  memoryValue: MemoryFigures = { totalMiB: 16_000, usedMiB: 4_000, freeMiB: 12_000 };
  loadValue = 0.5;
  mode: PeerMode = 'ok';
  calls = 0;

  memory(): Promise<MemoryFigures> {
    return this.answer(() => ({ ...this.memoryValue }));
  }

  load1(): Promise<number> {
    return this.answer(() => this.loadValue);
  }

  private answer<T>(fn: () => T): Promise<T> {
    this.calls++;
    if (this.mode === 'hang') return new Promise<T>(() => undefined);
    if (this.mode === 'fail') return Promise.reject(new Error('/proc unreadable'));
    return Promise.resolve(fn());
  }
}

/** A fake {@link SelfReset}: records each reset with the clock time; the machine "goes down" (never resolves) when `hangs`. */
export class FakeSelfReset implements SelfReset {
  readonly resets: { at: number; reason: string }[] = [];
  hangs = false;

  constructor(private readonly clock: Clock) {}

  reset(reason: string): Promise<void> {
    this.resets.push({ at: this.clock.now(), reason });
    return this.hangs ? new Promise<void>(() => undefined) : Promise.resolve();
  }
}

/** One parsed log line. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A real (pino) logger whose lines are kept in memory, parsed, for assertions. */
export function memoryLogger(): { logger: Logger; lines: LogLine[]; messages: (match?: RegExp) => string[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({ service: 'test', debug: true, dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) } });
  const messages = (match?: RegExp): string[] => lines.map((l) => l.msg).filter((m) => match === undefined || match.test(m));
  return { logger, lines, messages };
}

/**
 * Advances `clock` in `stepMs` steps until `p` settles (at most `limitMs` of virtual time) and
 * returns its value with the virtual time it took. Throws if it did not settle in time.
 */
export async function settle<T>(clock: VirtualClock, p: Promise<T>, opts: { stepMs?: number; limitMs?: number } = {}): Promise<{ value: T; tookMs: number }> {
  const start = clock.now();
  let done = false;
  const watched = p.finally(() => void (done = true));
  watched.catch(() => undefined);
  await flushMicrotasks();
  while (!done && clock.now() - start < (opts.limitMs ?? 600_000)) await clock.advance(opts.stepMs ?? 100);
  if (!done) throw new Error(`did not settle within ${opts.limitMs ?? 600_000} ms of virtual time`);
  return { value: await watched, tookMs: clock.now() - start };
}
