/**
 * The suicide peer check's rule (pure): is a Zookeeper outage global?
 *
 * Only a coordinator can fence, and only with a ZK session on a quorum; the ZK servers run exactly
 * on the coordinators. So the outage is **global** iff a strict majority of the coordinators
 * (counting this node, when it is one, from its own knowledge) confirm they cannot reach ZK: their
 * keepaliled's session is not connected AND their own server is not serving. A majority of servers
 * not serving leaves no quorum: nobody can declare this node dead or restart its VMs, so resetting
 * gains nothing. Anything else — too few answers, an answer from the wrong node, a coordinator that
 * reaches ZK or whose server serves or is unknown — is **not global**: the node resets as
 * configured (an isolated node).
 *
 * @module
 */
import type { ZkReach } from '../ports.js';

/** One coordinator's answer, or why there is none. */
export type PeerAnswer =
  | { coordinator: string; self: boolean; reach: ZkReach }
  | { coordinator: string; self: boolean; error: string };

/** The verdict, with what each coordinator said (for the log). */
export interface OutageVerdict {
  global: boolean;
  /** Coordinators confirming they cannot reach ZK, in list order. */
  confirmed: string[];
  /** Confirmations needed: a strict majority of the coordinators. */
  needed: number;
  coordinators: number;
  /** One short phrase per coordinator, in list order (`hv1 cut off`, `hv2 no answer (…)`). */
  answers: string[];
}

/** A strict majority of `n`. */
export function majorityOf(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** Whether one answer confirms that coordinator cannot reach ZK (and is the coordinator asked). */
export function confirms(a: PeerAnswer): boolean {
  if (!('reach' in a)) return false;
  const r = a.reach;
  return r.node === a.coordinator && !r.sessionConnected && r.server === 'not-serving';
}

/** One answer as a short phrase. */
export function describeAnswer(a: PeerAnswer): string {
  const who = a.self ? `${a.coordinator} (self)` : a.coordinator;
  if (!('reach' in a)) return `${who} no answer (${a.error})`;
  const r = a.reach;
  if (r.node !== a.coordinator) return `${who} answered as ${JSON.stringify(r.node)} (ignored)`;
  if (r.sessionConnected) return `${who} reaches Zookeeper`;
  if (r.server === 'serving') return `${who} server serving (${r.serverDetail})`;
  if (r.server === 'unknown') return `${who} server unknown (${r.serverDetail})`;
  return `${who} cut off (${r.serverDetail})`;
}

/** Judges the answers of every coordinator in `coordinators` (one answer each, any order). */
export function judgeOutage(coordinators: readonly string[], answers: readonly PeerAnswer[]): OutageVerdict {
  const byName = new Map(answers.map((a) => [a.coordinator, a]));
  const ordered = coordinators.map((c): PeerAnswer => byName.get(c) ?? { coordinator: c, self: false, error: 'not asked' });
  const confirmed = ordered.filter(confirms).map((a) => a.coordinator);
  const needed = majorityOf(coordinators.length);
  return {
    global: coordinators.length > 0 && confirmed.length >= needed,
    confirmed,
    needed,
    coordinators: coordinators.length,
    answers: ordered.map(describeAnswer),
  };
}

/** The verdict as one line: `2 of 3 coordinators cannot reach Zookeeper (2 needed): hv1 …, hv2 …`. */
export function describeVerdict(v: OutageVerdict): string {
  return `${v.confirmed.length} of ${v.coordinators} coordinators cannot reach Zookeeper (${v.needed} needed): ${v.answers.join(', ')}`;
}
