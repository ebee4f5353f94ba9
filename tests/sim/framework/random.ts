import { prng } from '@pvc/runtime';
import type { ClusterSpec, SimEvent } from './scenario.js';
import { SimCluster } from './sim-cluster.js';

const HEAL_S = 60;
const READY_S = 85;
const END_S = 100;

function ev(atS: number, verb: string, ...args: string[]): SimEvent {
  const atMs = Math.round(atS * 10) * 100;
  return { atMs, verb, args, line: `${(atMs / 1000).toFixed(1)} ${verb} ${args.join(' ')}` };
}

/** A random cluster configuration and fault schedule, healed at 60 s and readied at 85 s. */
export function randomSchedule(seed: number): { spec: ClusterSpec; events: SimEvent[] } {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const span = (lo: number, hi: number): number => lo + r() * (hi - lo);
  const nodes = ['hv1', 'hv2', 'hv3', 'hv4'];
  const suicide = r() < 0.5 ? 0 : 2;
  const spec: ClusterSpec = {
    nodes, coordinators: ['hv1', 'hv2', 'hv3'], memoryMiB: 8192, keepaliveInterval: 1,
    fenceIntervals: pick([3, 4]), suicideIntervals: suicide, successfulFence: 'migrate',
    failedFence: suicide > 0 && r() < 0.7 ? 'migrate' : 'none',
    // Not drawn from r(), so every seed keeps the schedule it had before the peer check existed.
    peerCheck: seed % 2 === 0,
    vms: Array.from({ length: 6 }, (_, i) => ({ name: `vm${i + 1}`, node: pick(nodes), memoryMiB: pick([1024, 2048]) })),
    settleS: 0,
    zkSessionTimeoutMs: 4_000,
  };
  const events: SimEvent[] = [];
  const faults = 1 + Math.floor(r() * 4);
  for (let i = 0; i < faults; i++) {
    const at = span(8, 45);
    const node = pick(nodes);
    const kind = pick(['power', 'power', 'network', 'network', 'ipmi', 'zk-expire', 'zk'] as const);
    if (kind === 'power') events.push(ev(at, 'power', node, 'off'), ev(Math.min(HEAL_S, at + span(5, 30)), 'power', node, 'on'));
    if (kind === 'network') events.push(ev(at, 'network', node, 'off'), ev(Math.min(HEAL_S, at + span(0.5, 15)), 'network', node, 'on'));
    if (kind === 'ipmi') events.push(ev(at, 'ipmi', node, 'unreachable'), ev(Math.min(HEAL_S, at + span(5, 30)), 'ipmi', node, 'reachable'));
    if (kind === 'zk-expire') events.push(ev(at, 'zk-expire', node));
    if (kind === 'zk') events.push(ev(at, 'zk', 'down'), ev(Math.min(HEAL_S, at + span(1, 15)), 'zk', 'up'));
  }
  for (const n of nodes) events.push(ev(HEAL_S, 'power', n, 'on'), ev(HEAL_S, 'network', n, 'on'), ev(HEAL_S, 'ipmi', n, 'reachable'));
  events.push(ev(HEAL_S, 'zk', 'up'));
  for (const n of nodes) events.push(ev(READY_S, 'ready', n));
  events.push(ev(END_S, 'maintenance', 'off'));
  events.sort((a, b) => a.atMs - b.atMs);
  return { spec, events };
}

/** Runs one seed; resolves to the invariant violations (empty = fine) and the event log. */
export async function runSeed(seed: number): Promise<{ violations: string[]; log: string[]; schedule: string[] }> {
  const { spec, events } = randomSchedule(seed);
  const sim = new SimCluster(spec);
  await sim.setUp();
  await sim.run(events, 1);
  await sim.invariants.final();
  await sim.tearDown();
  const schedule = [`config: fence_intervals ${spec.fenceIntervals}, suicide ${spec.suicideIntervals}, failed_fence ${spec.failedFence}, peer check ${spec.peerCheck ? 'on' : 'off'}`, ...events.map((e) => e.line)];
  return { violations: sim.invariants.violations, log: sim.lines, schedule };
}
