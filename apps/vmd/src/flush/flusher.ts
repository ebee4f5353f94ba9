import type { NodeFacts } from '@pvc/placement';
import { describeError, WorkQueue, type Clock, type Logger, type WorkOutcome } from '@pvc/runtime';
import { clusterKeys, domainKeys, nodeKeys, pair, paths, readKey, type NodeDomainState, type WritePair, type ZkClient } from '@pvc/zk';
import type { Hypervisor } from '../host/hypervisor.js';
import { FlushScope, readNodeFacts } from './facts.js';
import { planFlushStep, type FlushFailure, type FlushJob, type FlushKind, type FlushLimits, type FlushStep, type FlushWrite } from './plan.js';

/**
 * Defaults. `concurrency` 4: a live migration here is mostly waiting (the handshake's 0.5 s + 1 s
 * pauses, lock round trips, a few hundred ms of copying a small guest), so 4 in flight hide most
 * of it without making every copy compete for the links and CPUs at once; a constant, not a config key.
 * Three tries per VM, 10 s apart; a move with no result after 5 min counts as failed (the
 * sender's own bounds end far earlier).
 */
export const FLUSH_LIMITS: FlushLimits = { concurrency: 4, maxRounds: 3, retryPauseMs: 10_000, jobTimeoutMs: 300_000 };

/**
 * How long a run reuses the nodes' placement figures, ms. They change at each node's keepalive
 * (seconds apart) and the plan adds the moves in flight itself, while steps come as often as
 * reconcile passes (several a second during a flush): each would read every node's figures.
 */
export const NODE_FACTS_MAX_AGE_MS = 1000;

/** What the flusher works with. */
export interface FlusherDeps {
  zk: ZkClient;
  hv: Hypervisor;
  clock: Clock;
  logger: Logger;
  /** This node's name. */
  node: string;
  limits?: Partial<FlushLimits>;
  /** Step interval, ms (default 500); a {@link NodeFlusher.sync} call steps at once. */
  pollMs?: number;
}

/** One flush or unflush, from the `domainstate` change that asked for it to its end. */
interface Run {
  readonly kind: FlushKind;
  readonly ac: AbortController;
  readonly log: Logger;
  readonly t0: number;
  jobs: ReadonlyMap<string, FlushJob>;
  failures: ReadonlyMap<string, FlushFailure>;
  /** Which VMs each step reads (a scan of every VM now and then, see {@link FlushScope}). */
  readonly scope: FlushScope;
  /** The nodes' placement figures (flush), reused for {@link NODE_FACTS_MAX_AGE_MS}. */
  nodes?: { readonly facts: NodeFacts[]; readonly atMs: number };
  /** The last step looked done without a scan of every VM: the next one scans before finishing. */
  scanBeforeFinish: boolean;
  /** flushed/ready written: nothing more to do until `domainstate` changes. */
  finished: boolean;
}

/** The flusher queue's one key: a step of the current run. */
const STEP = 'step';

const DOMAIN_STATE_AFTER: Record<FlushKind, NodeDomainState> = { flush: 'flushed', unflush: 'ready' };

/**
 * Node flush / unflush (inventory §2.3): reacts to this node's `domainstate`. `flush` moves every
 * VM off the node, up to `concurrency` at a time, then writes `flushed` — only after libvirt here
 * shows no VM known to ZK but those given up on (each left running here in `start` with its
 * `failedreason` written first, so a reader of `flushed` finds every failure). `unflush` brings
 * back the VMs whose lastnode is this node, starts the autostart ones, clears the flush's
 * failedreasons, then writes `ready`. A new flush/unflush (any change of `domainstate`) cancels
 * the running one (moves already asked for finish through the migration machinery).
 *
 * The steps run in a {@link WorkQueue} of one key: one step at a time (a new run's first step
 * waits for the cancelled run's step in flight), every `pollMs` until the run is finished or at
 * once on a {@link sync}; a step that throws is retried after a growing delay (`pollMs` doubling
 * to 4 × `pollMs`) and logged by the queue once per change of its error.
 */
export class NodeFlusher {
  private current: Run | undefined;
  private readonly queue: WorkQueue<typeof STEP>;
  private readonly limits: FlushLimits;
  private readonly pollMs: number;
  /** Completed runs, `<kind> <outcome>` (tests, status). */
  readonly history: string[] = [];

  constructor(private readonly deps: FlusherDeps) {
    this.limits = { ...FLUSH_LIMITS, ...deps.limits };
    this.pollMs = deps.pollMs ?? 500;
    this.queue = new WorkQueue({
      name: 'flush-step', clock: deps.clock, logger: deps.logger,
      backoff: { initialMs: this.pollMs, maxMs: 4 * this.pollMs, factor: 2 },
      describe: () => ({ op: this.current?.kind }),
      work: () => this.work(),
    });
  }

  /** Called with this node's `domainstate` after every reconciler pass (and on its changes). */
  sync(domainState: string | undefined): void {
    const kind = domainState === 'flush' || domainState === 'unflush' ? domainState : undefined;
    const cur = this.current;
    if (cur !== undefined && cur.kind === kind) {
      if (!cur.finished) this.queue.add(STEP, 'sync');
      return;
    }
    if (cur !== undefined) {
      if (!cur.finished) {
        this.deps.logger.info({ was: cur.kind, domainstate: domainState }, `${cur.kind} cancelled: domainstate is now ${domainState ?? 'unset'}`);
        this.history.push(`${cur.kind} cancelled`);
      }
      cur.ac.abort();
      this.current = undefined;
    }
    if (kind === undefined) return;
    const log = this.deps.logger.child({ op: kind });
    log.info({ concurrency: this.limits.concurrency }, `${kind} started`);
    this.current = {
      kind, ac: new AbortController(), log, t0: this.deps.clock.now(), jobs: new Map(), failures: new Map(), finished: false,
      scope: new FlushScope({ zk: this.deps.zk, logger: this.deps.logger, self: this.deps.node, kind }), scanBeforeFinish: false,
    };
    // A new run starts afresh: the last run's failing steps do not delay its first one.
    this.queue.forget(STEP);
    this.queue.add(STEP, kind);
  }

  /** Stops a running flush/unflush (vmd stopping) and waits for its step in flight. */
  async stop(): Promise<void> {
    const run = this.current;
    this.current = undefined;
    if (run !== undefined && !run.finished) this.history.push(`${run.kind} cancelled`);
    run?.ac.abort();
    await this.queue.stop();
  }

  /** One step of the current run: again in `pollMs` until it is finished. */
  private async work(): Promise<WorkOutcome> {
    const run = this.current;
    if (run === undefined || run.finished) return { kind: 'done' };
    const { kind, ac, log } = run;
    try {
      const { step, full } = await this.step(run);
      run.jobs = step.jobs;
      run.failures = step.failures;
      this.logStep(log, step);
      run.scanBeforeFinish = step.outcome === 'done' && !full;
      if (run.scanBeforeFinish) return { kind: 'done', againInMs: 0 };
      if (step.outcome === 'done' && (await this.finish(kind, ac.signal, log, step.leftHere))) {
        run.finished = true;
        this.history.push(`${kind} done`);
        const fields = { ms: this.deps.clock.now() - run.t0, left: step.leftHere.length };
        if (step.leftHere.length === 0) log.info(fields, `${kind} finished: domainstate ${DOMAIN_STATE_AFTER[kind]}`);
        else log.warn({ ...fields, vms: step.leftHere }, `${kind} finished: domainstate ${DOMAIN_STATE_AFTER[kind]}; VMs that could not be moved still run here (see their failedreason)`);
        return { kind: 'done' };
      }
    } catch (err) {
      // A cancelled run's failure is nobody's concern: the next run (if any) was added by sync.
      if (ac.signal.aborted) return { kind: 'done' };
      return { kind: 'retry', reason: `${kind} step failed: ${describeError(err)}` };
    }
    return { kind: 'done', againInMs: this.pollMs };
  }

  private async step(run: Run): Promise<{ step: FlushStep; full: boolean }> {
    const { kind, jobs, failures } = run;
    const signal = run.ac.signal;
    const { zk, logger, node } = this.deps;
    const active = new Set((await this.deps.hv.list()).filter((d) => d.active).map((d) => d.uuid));
    const extra = new Set([...jobs.keys(), ...failures.keys()]);
    const [{ vms, full }, nodes, selector] = await Promise.all([
      run.scope.read(active, extra, this.deps.clock.now(), run.scanBeforeFinish),
      kind === 'flush' ? this.nodeFacts(run) : Promise.resolve([]),
      readKey(zk, clusterKeys.migrationTargetSelector, { logger }),
    ]);
    const step = planFlushStep({
      kind, self: node, nowMs: this.deps.clock.now(), vms, nodes, clusterSelector: selector, jobs, failures, limits: this.limits,
    });
    if (signal.aborted) return { step: { ...step, writes: [], jobs }, full };
    const failed = await this.apply(step.writes);
    if (failed.size === 0) return { step, full };
    return { step: { ...step, jobs: new Map([...step.jobs].filter(([u]) => !failed.has(u))) }, full };
  }

  private async nodeFacts(run: Run): Promise<NodeFacts[]> {
    const now = this.deps.clock.now();
    if (run.nodes !== undefined && now - run.nodes.atMs < NODE_FACTS_MAX_AGE_MS) return run.nodes.facts;
    const facts = await readNodeFacts(this.deps.zk, this.deps.logger);
    run.nodes = { facts, atMs: now };
    return facts;
  }

  /** Writes each VM's keys (one transaction per VM); returns the VMs whose write failed. */
  private async apply(writes: readonly FlushWrite[]): Promise<Set<string>> {
    const failed = new Set<string>();
    await Promise.all(writes.map(async (w) => {
      const k = domainKeys(w.uuid);
      const pairs: WritePair[] = [];
      if (w.state !== undefined) pairs.push(pair(k.state, w.state));
      if (w.node !== undefined) pairs.push(pair(k.node, w.node));
      if (w.lastNode !== undefined) pairs.push(pair(k.lastNode, w.lastNode));
      if (w.autostart !== undefined) pairs.push(pair(k.nodeAutostart, w.autostart));
      if (w.failedReason !== undefined) pairs.push(pair(k.failedReason, w.failedReason));
      try {
        await this.deps.zk.write(pairs);
        this.deps.logger.info({ vm: w.name, uuid: w.uuid, state: w.state, node: w.node, failedreason: w.failedReason, why: w.why }, 'flush: VM keys written');
        if (w.unknownLimitNodes) this.deps.logger.warn({ vm: w.name, key: k.nodeLimit.path, unknown: w.unknownLimitNodes }, 'node_limit names nodes that do not exist; ignored');
      } catch (err) {
        failed.add(w.uuid);
        this.deps.logger.warn({ vm: w.name, uuid: w.uuid, err: describeError(err) }, 'flush: cannot write the VM keys; retried next step');
      }
    }));
    return failed;
  }

  /**
   * Writes flushed/ready if still asked for and (flush) libvirt here runs no VM known to ZK but
   * the ones given up on (`leftHere`: state start, node here, their failedreason written).
   */
  private async finish(kind: FlushKind, signal: AbortSignal, log: Logger, leftHere: readonly string[]): Promise<boolean> {
    const { zk, node } = this.deps;
    if (kind === 'flush') {
      const known = new Set(await zk.children(paths.domains));
      const still = (await this.deps.hv.list()).filter((d) => d.active && known.has(d.uuid) && !leftHere.includes(d.uuid));
      if (still.length > 0) {
        log.debug({ vms: still.map((d) => d.name) }, 'flush: VMs still run here; not flushed yet');
        return false;
      }
    }
    const k = nodeKeys(node).domainState;
    if (signal.aborted || (await readKey(zk, k, { logger: this.deps.logger })) !== kind) return false;
    await zk.write([pair(k, DOMAIN_STATE_AFTER[kind])]);
    return true;
  }

  private logStep(log: Logger, step: FlushStep): void {
    for (const e of step.events) {
      const fields = { vm: e.name, uuid: e.uuid, detail: e.detail };
      if (e.kind === 'moved') log.info(fields, 'flush: VM moved');
      else if (e.kind === 'failed') log.warn(fields, 'flush: VM could not be moved; it stays where it runs and is retried');
      else log.error(fields, 'flush: VM could not be moved; giving up on it (it keeps running here, its failedreason says why)');
    }
  }
}
