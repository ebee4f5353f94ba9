/**
 * Test rig of the primary election (specs only): coordinators on a fake ZK server and a virtual
 * clock, the errors the real Peers adapter rejects with, and {@link FakePeers} that fail with them.
 *
 * @module
 */
import { VirtualClock } from '@pvc/runtime';
import { RpcError } from '@pvc/rpc';
import { paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from '../model.js';
import type { PeerCallOptions } from '../ports.js';
import { FakePeers, memoryLogger, settle, type LogLine } from '../testing/fakes.js';
import { seedBase, seedNode } from '../testing/cluster.js';
import { PrimaryElection } from './election.js';

const unavailable = { code: 'RPC_UNAVAILABLE', status: 14, method: 'setPrimary', retryable: true } as const;

/** What GrpcPeers (over @grpc/grpc-js) rejects with, messages as seen on a host. */
export const realErrors = {
  /** netd stopped (its socket is removed) or never started. */
  enoent: (): Error => new RpcError('setPrimary: No connection established. Last error: Error: connect ENOENT /run/pvc/sockets/netd.sock. Resolution note: ', unavailable),
  /** cephd died and left its socket behind. */
  refused: (): Error => new RpcError('setPrimary: No connection established. Last error: Error: connect ECONNREFUSED /run/pvc/sockets/cephd.sock. Resolution note: ', unavailable),
  /** The call's deadline passed (the service may be alive). */
  timeout: (): Error => new RpcError('setPrimary: Deadline exceeded after 4.999s,name resolution: 0.001s,Waiting for LB pick', { ...unavailable, code: 'RPC_TIMEOUT', status: 4 }),
  /** netd answered: a duty did not stop (it left the role anyway). */
  stopFailed: (): Error => new RpcError('setPrimary: netd: primary duties failed to stop: upstream-ip: connect ENOENT /x', { code: 'DUTY_STOP_FAILED', status: 9, method: 'setPrimary' }),
};

/**
 * {@link FakePeers} whose failing duty switches fail as the real adapter does: with `failWith` set,
 * a call failing through the `fail` knob rejects with that error instead; `failNext` makes the next
 * that-many duty switches fail (then the knobs apply again).
 */
export class RealisticPeers extends FakePeers {
  failWith: (() => Error) | undefined;
  failNext = 0;

  override setPrimaryDuties(on: boolean, reason: string, opts: PeerCallOptions): Promise<void> {
    const saved = this.knobs.mode;
    const forced = this.failNext > 0;
    if (forced) {
      this.failNext--;
      this.knobs.mode = { ...saved, setPrimaryDuties: 'fail' };
    }
    const failing = this.knobs.mode?.setPrimaryDuties === 'fail';
    // FakePeers reads its mode when the call starts: restoring it now affects only later calls.
    const call = super.setPrimaryDuties(on, reason, opts);
    this.knobs.mode = saved;
    const failWith = this.failWith;
    return call.catch((err: unknown) => {
      throw failing && failWith ? failWith() : err;
    });
  }
}

const T0 = 1_700_000_000_000;

/** One coordinator of the rig: its election, fakes, recorded events and log lines. */
export interface Coord {
  name: string;
  zk: ZkClient;
  peers: RealisticPeers;
  election: PrimaryElection;
  log: LogLine[];
  events: KeepalivedEvent[];
  ac: AbortController;
  running: Promise<void>;
  contend: boolean;
}

/** Coordinators on one fake ZK server and virtual clock; `order` records duty switches across them. */
export interface Rig {
  clock: VirtualClock;
  server: FakeZkServer;
  writer: ZkClient;
  order: string[];
  c: Record<string, Coord>;
  primary(): Promise<string | undefined>;
  routers(): Promise<Record<string, string | undefined>>;
  stop(): Promise<void>;
}

/** Seeds the cluster and builds one election per coordinator (running unless `start: false`). */
export async function rig(
  names: string[],
  opts: {
    primary?: string; routers?: Record<string, string>; start?: boolean;
    lease?: { ms: number; silentForMs: (name: string) => number }; reassertEveryMs?: number;
    /** The liveness tracker's view and a dead primary's grace (see ElectionDeps). */
    silentForMs?: (name: string) => number | undefined; deadPrimaryGraceMs?: number;
  } = {},
): Promise<Rig> {
  const clock = new VirtualClock(T0);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect();
  await seedBase(writer, { primary: opts.primary ?? 'none' });
  for (const n of names) await seedNode(writer, T0, { name: n, mode: 'coordinator', routerState: opts.routers?.[n] ?? 'secondary' });
  const order: string[] = [];
  const c: Record<string, Coord> = {};
  for (const name of names) {
    const zk = await server.connect();
    const peers = new RealisticPeers(clock, { name, order });
    const events: KeepalivedEvent[] = [];
    const { logger, lines: log } = memoryLogger();
    const coord: Coord = { name, zk, peers, events, log, ac: new AbortController(), running: Promise.resolve(), contend: true, election: undefined as unknown as PrimaryElection };
    coord.election = new PrimaryElection({
      self: name, coordinators: names, zk, clock, logger, events: (e) => events.push(e), peers,
      primaryKeys: () => [[paths.config.migrationTargetSelector, 'mem']], mayContend: () => coord.contend,
      ...(opts.lease && { lease: { ms: opts.lease.ms, ownSilentForMs: () => opts.lease!.silentForMs(name) } }),
      ...(opts.reassertEveryMs !== undefined && { reassertEveryMs: opts.reassertEveryMs }),
      ...(opts.silentForMs && { silentForMs: opts.silentForMs }),
      ...(opts.deadPrimaryGraceMs !== undefined && { deadPrimaryGraceMs: opts.deadPrimaryGraceMs }),
    });
    c[name] = coord;
  }
  if (opts.start !== false) for (const co of Object.values(c)) co.running = co.election.run(co.ac.signal);
  return {
    clock, server, writer, order, c,
    primary: () => writer.read(paths.config.primaryNode),
    routers: async () => Object.fromEntries(await Promise.all(names.map(async (n) => [n, await writer.read(paths.node(n).routerState)] as const))),
    stop: async () => {
      for (const co of Object.values(c)) co.ac.abort();
      await settle(clock, Promise.all(Object.values(c).map((co) => co.running.catch(() => undefined))));
    },
  };
}

/** The coordinator named. */
export const co = (r: Rig, name: string): Coord => {
  const x = r.c[name];
  if (!x) throw new Error(`no coordinator ${name}`);
  return x;
};

/** The recorded duty switch calls of one coordinator: [on, started at, finished at]. */
export const duties = (x: Coord): [unknown, number, number | undefined][] => x.peers.callsOf('setPrimaryDuties').map((c) => [c.args[0], c.at, c.done?.at]);

/** When a coordinator asked for its duties off, in ms after `t0`. */
export const offTimes = (x: Coord, t0: number): number[] => x.peers.callsOf('setPrimaryDuties').filter((c) => c.args[0] === false).map((c) => c.at - t0);

/** A coordinator's router transitions, as `from -> to (reason)`. */
export const transitions = (x: Coord): string[] => x.events.flatMap((e) => (e.kind === 'router-state' ? [`${e.from} -> ${e.to} (${e.reason})`] : []));

/** Its log lines at warn (40) or above. */
export const warnings = (x: Coord): LogLine[] => x.log.filter((l) => l.level >= 40);

/** Stops a coordinator's election loop as shutdown does, then steps down; returns when it began and how long it took. */
export async function shutDown(r: Rig, x: Coord): Promise<{ t0: number; tookMs: number }> {
  x.ac.abort();
  await settle(r.clock, x.running);
  const t0 = r.clock.now();
  const { tookMs } = await settle(r.clock, x.election.stepDown(), { stepMs: 50 });
  return { t0, tookMs };
}
