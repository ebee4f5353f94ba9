import { planPlacements, withPlacement, type NodeFacts } from '@pvc/placement';
import type { MigrationMethod, VmState } from '@pvc/zk';
import { flushReasonPrefix, gaveUpReason, noTargetReason } from './reasons.js';

/** What this node's `domainstate` asks for. */
export type FlushKind = 'flush' | 'unflush';

/** One VM as a flush or unflush step sees it (ZK keys + whether libvirt runs it here). */
export interface FlushVm {
  readonly uuid: string;
  readonly name: string;
  readonly state: string;
  readonly node: string;
  readonly lastNode: string;
  /** Active in this node's libvirt. */
  readonly runningHere: boolean;
  readonly memoryMiB: number;
  readonly vcpus: number;
  /** Raw `node_selector`. */
  readonly selector: string;
  readonly nodeLimit: readonly string[];
  /** `node_autostart`. */
  readonly autostart: boolean;
  /** `migration_method`. */
  readonly method: MigrationMethod;
  readonly failedReason: string;
  /** VNIs of its `vmbr<vni>` bridges: a target known to lack one is not chosen. */
  readonly networks: readonly number[];
}

/** A move this node asked for and waits on. `target` undefined = shutdown + autostart (no target). */
export interface FlushJob {
  readonly uuid: string;
  readonly name: string;
  readonly target: string | undefined;
  readonly sinceMs: number;
  /** 1 for the first try. */
  readonly round: number;
}

/** A VM whose move failed: retried at `retryAtMs` (Infinity = given up). */
export interface FlushFailure {
  readonly round: number;
  readonly retryAtMs: number;
  readonly why: string;
  /** The failed job's target (undefined = a shutdown for lack of a target). */
  readonly target: string | undefined;
}

/** Bounds of a flush/unflush. */
export interface FlushLimits {
  /** Moves in flight at once. */
  readonly concurrency: number;
  /** Tries per VM before giving up. */
  readonly maxRounds: number;
  /** Pause before a failed VM is tried again, ms. */
  readonly retryPauseMs: number;
  /** A move with no result after this long counts as failed, ms. */
  readonly jobTimeoutMs: number;
}

/** Keys to write for one VM (only the ones given). */
export interface FlushWrite {
  readonly uuid: string;
  readonly name: string;
  readonly state?: VmState;
  readonly node?: string;
  readonly lastNode?: string;
  readonly autostart?: boolean;
  /** `failedreason` (a flush's outcome, or '' to clear a stale one). */
  readonly failedReason?: string;
  readonly why: string;
  /** `node_limit` entries that name no known node (reported with the VM's key, never fatal). */
  readonly unknownLimitNodes?: readonly string[];
}

/** Something worth a log line. */
export interface FlushEvent {
  readonly uuid: string;
  readonly name: string;
  readonly kind: 'moved' | 'failed' | 'gave-up';
  readonly detail: string;
}

/** Everything one step decides from. */
export interface FlushStepInput {
  readonly kind: FlushKind;
  readonly self: string;
  readonly nowMs: number;
  readonly vms: readonly FlushVm[];
  readonly nodes: readonly NodeFacts[];
  /** Raw `/config/migration_target_selector`. */
  readonly clusterSelector: string;
  readonly jobs: ReadonlyMap<string, FlushJob>;
  readonly failures: ReadonlyMap<string, FlushFailure>;
  readonly limits: FlushLimits;
}

/** What one step decided; outcome `working` = keep stepping, `done` = write flushed/ready. */
export interface FlushStep {
  readonly writes: readonly FlushWrite[];
  readonly jobs: ReadonlyMap<string, FlushJob>;
  readonly failures: ReadonlyMap<string, FlushFailure>;
  readonly events: readonly FlushEvent[];
  readonly outcome: 'working' | 'done';
  /** Flush: VMs given up on that still run here (state start, node self, failedreason written); `flushed` allows them. */
  readonly leftHere: readonly string[];
}

type JobStatus = { s: 'running' } | { s: 'done' } | { s: 'failed'; why: string };

const MIGRATING: readonly string[] = ['migrate', 'migrate-live'];
/** States a VM passes through: an unflush waits for them to settle before touching the VM. */
const TRANSIENT: readonly string[] = [...MIGRATING, 'shutdown', 'restart'];

/** Where a job stands, from the VM's keys and libvirt here. */
export function jobStatus(kind: FlushKind, job: FlushJob, vm: FlushVm | undefined, self: string, nowMs: number, timeoutMs: number): JobStatus {
  if (vm === undefined) return { s: 'done' };
  const why = vm.failedReason !== '' ? vm.failedReason : 'migration aborted';
  if (kind === 'flush') {
    if (job.target === undefined) {
      if (!vm.runningHere && vm.state === 'stop') return { s: 'done' };
    } else {
      if (!vm.runningHere && vm.node === job.target && !MIGRATING.includes(vm.state)) return { s: 'done' };
      if (vm.runningHere && vm.node === self && vm.state === 'start') return { s: 'failed', why };
    }
  } else {
    if (vm.runningHere && vm.node === self && vm.state === 'start') return { s: 'done' };
    if (!vm.runningHere && vm.node !== self && vm.state === 'start') return { s: 'failed', why };
  }
  if (nowMs - job.sinceMs > timeoutMs) return { s: 'failed', why: `no result within ${timeoutMs} ms (state ${vm.state}, node ${vm.node})` };
  return { s: 'running' };
}

/**
 * One step of a node flush or unflush (inventory §2.3, §5.4 "Node flush"), pure: classifies the
 * moves in flight (done, failed → retried after a pause up to `maxRounds`, running), then starts
 * new moves while fewer than `concurrency` are in flight. Flush: every VM assigned here that runs
 * here in `start` goes to a target chosen by `planPlacements` (the selector, §6; this node and the
 * VM's lastnode excluded, and nodes known to lack one of its networks) with `migrate` (`migrate-live` when its method is `live`), node = target,
 * lastnode = its lastnode if set, else this node (the original's rule); no target → `shutdown` +
 * autostart (the original's rule) with a `failedreason` saying so. A VM given up on (`maxRounds`
 * failed moves, settled back here by the sender's abort: `start`, node = self) keeps running here
 * and gets a `failedreason` saying why. `done` once every VM still running here is such a VM
 * (`leftHere`) with its reason written. Unflush: VMs whose lastnode is this node come back
 * (`migrate`, node = self, lastnode ""; a VM not in `start` is only reassigned), VMs assigned here
 * in `stop` with autostart start (flag cleared), and a flush's reason on any other VM assigned
 * here is cleared. Every reason a flush writes starts with `Flush of <self>: `.
 */
export function planFlushStep(input: FlushStepInput): FlushStep {
  const byUuid = new Map(input.vms.map((v) => [v.uuid, v]));
  const jobs = new Map<string, FlushJob>();
  const failures = new Map(input.failures);
  const events: FlushEvent[] = [];
  for (const job of input.jobs.values()) {
    const st = jobStatus(input.kind, job, byUuid.get(job.uuid), input.self, input.nowMs, input.limits.jobTimeoutMs);
    if (st.s === 'running') jobs.set(job.uuid, job);
    else if (st.s === 'done') {
      failures.delete(job.uuid);
      events.push({ uuid: job.uuid, name: job.name, kind: 'moved', detail: job.target === undefined ? 'shut down (autostart set)' : `now on ${job.target}` });
    } else {
      const gaveUp = job.round >= input.limits.maxRounds;
      failures.set(job.uuid, { round: job.round, retryAtMs: gaveUp ? Infinity : input.nowMs + input.limits.retryPauseMs, why: st.why, target: job.target });
      events.push({ uuid: job.uuid, name: job.name, kind: gaveUp ? 'gave-up' : 'failed', detail: `try ${job.round}/${input.limits.maxRounds}: ${st.why}` });
    }
  }
  const ctx = { input, jobs, failures };
  const writes = input.kind === 'flush' ? [...startFlushMoves(ctx), ...recordGivenUp(ctx)] : [...startUnflushMoves(ctx, byUuid), ...clearFlushReasons(input)];
  const leftHere = input.kind === 'flush' ? input.vms.filter((v) => v.runningHere && givenUpHere(ctx, v)).map((v) => v.uuid) : [];
  return { writes, jobs, failures, events, outcome: outcomeOf(ctx, writes, leftHere), leftHere };
}

interface StepCtx {
  input: FlushStepInput;
  jobs: Map<string, FlushJob>;
  failures: Map<string, FlushFailure>;
}

function due(ctx: StepCtx, uuid: string): boolean {
  return !ctx.jobs.has(uuid) && (ctx.failures.get(uuid)?.retryAtMs ?? 0) <= ctx.input.nowMs;
}

function newJob(ctx: StepCtx, vm: FlushVm, target: string | undefined): void {
  const round = (ctx.failures.get(vm.uuid)?.round ?? 0) + 1;
  ctx.jobs.set(vm.uuid, { uuid: vm.uuid, name: vm.name, target, sinceMs: ctx.input.nowMs, round });
}

function startFlushMoves(ctx: StepCtx): FlushWrite[] {
  const { input } = ctx;
  const slots = Math.max(0, input.limits.concurrency - ctx.jobs.size);
  const picks = input.vms
    .filter((v) => v.runningHere && v.node === input.self && v.state === 'start' && due(ctx, v.uuid))
    .sort((a, b) => a.name.localeCompare(b.name))
    .slice(0, slots);
  const writes: FlushWrite[] = [];
  let nodes = inFlightNodes(ctx);
  for (const vm of picks) {
    const req = { name: vm.uuid, memoryMiB: vm.memoryMiB, vcpus: vm.vcpus, currentNode: input.self, selector: vm.selector, nodeLimit: vm.nodeLimit, networks: vm.networks };
    const exclude = vm.lastNode !== '' ? [input.self, vm.lastNode] : [input.self];
    const planned = planPlacements([req], nodes, input.clusterSelector, exclude);
    nodes = planned.nodes;
    const result = planned.placements[0]?.result;
    const unknown = result && result.unknownLimitNodes.length > 0 ? { unknownLimitNodes: result.unknownLimitNodes } : {};
    if (result?.ok) {
      newJob(ctx, vm, result.node);
      const state = vm.method === 'live' ? 'migrate-live' : 'migrate';
      // A reason left by an earlier flush of this node no longer describes the VM.
      const stale = vm.failedReason.startsWith(flushReasonPrefix(input.self)) ? { failedReason: '' } : {};
      writes.push({ uuid: vm.uuid, name: vm.name, state, node: result.node, lastNode: vm.lastNode !== '' ? vm.lastNode : input.self, why: result.reason, ...stale, ...unknown });
    } else {
      newJob(ctx, vm, undefined);
      const why = result?.reason ?? 'no nodes';
      writes.push({ uuid: vm.uuid, name: vm.name, state: 'shutdown', autostart: true, failedReason: noTargetReason(input.self, why), why: `no migration target: ${why}`, ...unknown });
    }
  }
  return writes;
}

/** Node facts with the moves in flight counted on their targets (ZK's figures lag until they land). */
function inFlightNodes(ctx: StepCtx): readonly NodeFacts[] {
  let nodes: readonly NodeFacts[] = ctx.input.nodes;
  const byUuid = new Map(ctx.input.vms.map((v) => [v.uuid, v]));
  for (const job of ctx.jobs.values()) {
    const vm = byUuid.get(job.uuid);
    if (job.target !== undefined && vm !== undefined) nodes = withPlacement(nodes, job.target, { name: vm.uuid, memoryMiB: vm.memoryMiB, vcpus: vm.vcpus, currentNode: ctx.input.self });
  }
  return nodes;
}

function startUnflushMoves(ctx: StepCtx, byUuid: ReadonlyMap<string, FlushVm>): FlushWrite[] {
  const { input } = ctx;
  const self = input.self;
  const writes: FlushWrite[] = [];
  for (const vm of input.vms) {
    if (vm.node === self && vm.autostart && vm.state === 'stop') {
      writes.push({ uuid: vm.uuid, name: vm.name, state: 'start', lastNode: '', autostart: false, why: 'autostart after unflush' });
    }
  }
  let slots = Math.max(0, input.limits.concurrency - ctx.jobs.size);
  const back = input.vms
    .filter((v) => v.node !== self && (v.lastNode === self || ctx.failures.has(v.uuid)) && due(ctx, v.uuid))
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const vm of back) {
    if (TRANSIENT.includes(vm.state)) continue;
    if (vm.state !== 'start') {
      if (vm.lastNode === self) writes.push({ uuid: vm.uuid, name: vm.name, node: self, lastNode: '', why: `reassigned back (state ${vm.state})` });
      continue;
    }
    if (slots-- <= 0) continue;
    newJob(ctx, byUuid.get(vm.uuid) ?? vm, self);
    writes.push({ uuid: vm.uuid, name: vm.name, state: 'migrate', node: self, lastNode: '', why: 'back to its lastnode' });
  }
  return writes;
}

/** A VM the flush gave up on, settled back here by the sender's abort (state start, node self). */
function givenUpHere(ctx: StepCtx, vm: FlushVm): boolean {
  return !ctx.jobs.has(vm.uuid) && ctx.failures.get(vm.uuid)?.retryAtMs === Infinity && vm.node === ctx.input.self && vm.state === 'start';
}

/**
 * Flush: each VM given up on and settled here gets its `failedreason` (level-based: rewritten until
 * it reads back). A lastnode naming this node (the flush's own, restored by the sender's abort) is
 * cleared: the VM never left.
 */
function recordGivenUp(ctx: StepCtx): FlushWrite[] {
  const { self } = ctx.input;
  const writes: FlushWrite[] = [];
  for (const vm of ctx.input.vms) {
    const failure = ctx.failures.get(vm.uuid);
    if (!vm.runningHere || failure === undefined || !givenUpHere(ctx, vm)) continue;
    const reason = gaveUpReason(self, failure.target, failure.round, failure.why);
    if (vm.failedReason === reason && vm.lastNode !== self) continue;
    writes.push({ uuid: vm.uuid, name: vm.name, failedReason: reason, ...(vm.lastNode === self ? { lastNode: '' } : {}), why: 'given up: it keeps running here' });
  }
  return writes;
}

/**
 * Unflush: the node is back, so a flush failure of it on a VM assigned here is history and is
 * cleared — except on a VM this unflush starts (autostart): its start clears it, or replaces it
 * with the start's own failure.
 */
function clearFlushReasons(input: FlushStepInput): FlushWrite[] {
  return input.vms
    .filter((v) => v.node === input.self && v.failedReason.startsWith(flushReasonPrefix(input.self)) && !(v.state === 'stop' && v.autostart))
    .map((v) => ({ uuid: v.uuid, name: v.name, failedReason: '', why: 'flush failure cleared: the node is readied' }));
}

function outcomeOf(ctx: StepCtx, writes: readonly FlushWrite[], leftHere: readonly string[]): FlushStep['outcome'] {
  const { input, jobs, failures } = ctx;
  if (jobs.size > 0 || writes.length > 0) return 'working';
  if (input.kind === 'flush') {
    const left = input.vms.filter((v) => v.runningHere && !leftHere.includes(v.uuid));
    return left.length === 0 ? 'done' : 'working';
  }
  const pending = [...failures.values()].some((f) => f.retryAtMs !== Infinity);
  const settling = input.vms.some((v) => v.lastNode === input.self && v.node !== input.self && TRANSIENT.includes(v.state));
  return pending || settling ? 'working' : 'done';
}
