/**
 * A coordinator's fencing stack (liveness tracker, fencer, fence monitor) on a fake Zookeeper with
 * a small cluster, for the fence unit tests and the simulator.
 *
 * @module
 */
import { VirtualClock } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeIpmi } from '@pvc/ipmi';
import type { KeepalivedEvent } from '../model.js';
import { LivenessTracker } from '../fence/liveness.js';
import { Fencer, type FenceSettings } from '../fence/fencer.js';
import { FenceMonitor } from '../fence/monitor.js';
import { FakePeers, memoryLogger, settle } from './fakes.js';
import { heartbeats, interceptZk, seedBase, seedNode, type SeedNode } from './cluster.js';

/** Start time of every rig (whole seconds + 0). */
export const RIG_T0 = 1_700_000_000_000;
/** keepalive_interval of the rig. */
export const RIG_INTERVAL = 5_000;

/** What {@link fenceRig} builds. */
export interface FenceRig {
  clock: VirtualClock;
  server: FakeZkServer;
  /** The other nodes' client (their keepalives, test writes). */
  writer: ZkClient;
  /** The fencing coordinator's client, unwrapped. */
  zk: ZkClient;
  spy: ReturnType<typeof interceptZk>;
  ipmi: FakeIpmi;
  peers: FakePeers;
  liveness: LivenessTracker;
  fencer: Fencer;
  monitor: FenceMonitor;
  events: KeepalivedEvent[];
  log: ReturnType<typeof memoryLogger>;
  beats: ReturnType<typeof heartbeats>;
  /** Starts the liveness tracker and the monitor loop. */
  start(): void;
  /** Stops the monitor loop and the heartbeats (waits for the loop to end in virtual time). */
  stop(): Promise<void>;
  kinds(): string[];
}

/** Options of {@link fenceRig}. */
export interface FenceRigOptions {
  /** Default: hv1 (coordinator, the fencer), hv2 (coordinator), hv3 (hypervisor). */
  nodes?: SeedNode[];
  maintenance?: boolean;
  primary?: string;
  settings?: Partial<FenceSettings>;
  storage?: boolean;
  /** Nodes whose keepalives are written every interval; default every node. */
  beating?: string[];
}

/** Builds the rig; nothing runs until `start()`. */
export async function fenceRig(opts: FenceRigOptions = {}): Promise<FenceRig> {
  const clock = new VirtualClock(RIG_T0);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect();
  await seedBase(writer, { maintenance: opts.maintenance ?? false, primary: opts.primary ?? 'hv1' });
  const nodes = opts.nodes ?? [
    { name: 'hv1', mode: 'coordinator', routerState: 'primary' },
    { name: 'hv2', mode: 'coordinator' },
    { name: 'hv3', mode: 'hypervisor', memFreeMiB: 1_000 },
  ];
  for (const n of nodes) await seedNode(writer, RIG_T0, n);
  const zk = await server.connect({ sessionTimeoutMs: 10_000 });
  const spy = interceptZk(zk, clock);
  const ipmi = new FakeIpmi(clock);
  const peers = new FakePeers(clock, { name: 'hv1' });
  const log = memoryLogger();
  const events: KeepalivedEvent[] = [];
  const emit = (e: KeepalivedEvent): void => void events.push(e);
  const liveness = new LivenessTracker({ zk: spy.zk, clock, logger: log.logger, self: 'hv1', intervalMs: opts.settings?.intervalMs ?? RIG_INTERVAL });
  const settings: FenceSettings = {
    intervalMs: RIG_INTERVAL, fenceIntervals: 6, suicideIntervals: 0, successfulFence: 'migrate', failedFence: 'none', ipmiPort: 623,
    ...opts.settings,
  };
  const fencer = new Fencer({
    self: 'hv1', zk: spy.zk, clock, logger: log.logger, events: emit, peers, ipmi, liveness,
    storageEnabled: opts.storage ?? false, defaultSelector: 'mem', settings,
  });
  const monitor = new FenceMonitor({
    self: 'hv1', zk: spy.zk, clock, logger: log.logger, events: emit, liveness, fencer,
    intervalMs: settings.intervalMs, fenceIntervals: settings.fenceIntervals,
  });
  const beats = heartbeats(writer, clock, opts.beating ?? nodes.map((n) => n.name), RIG_INTERVAL);
  const ac = new AbortController();
  let running: Promise<void> = Promise.resolve();
  return {
    clock, server, writer, zk, spy, ipmi, peers, liveness, fencer, monitor, events, log, beats,
    start: () => {
      liveness.start();
      running = monitor.run(ac.signal);
    },
    stop: async () => {
      beats.stop();
      ac.abort();
      await settle(clock, running.catch(() => undefined));
      liveness.stop();
    },
    kinds: () => events.map((e) => e.kind),
  };
}
