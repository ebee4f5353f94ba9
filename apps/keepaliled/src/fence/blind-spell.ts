/**
 * The rule that decides how much of a node's silence survives a blind spell of this observer (its
 * ZK connection dropped, or its session expired, and came back). Pure: `LivenessTracker` applies it.
 *
 * On reconnection every window restarts (we were blind: Zookeeper may have taken no writes from
 * anybody meanwhile). A peer's keepalive versions can prove otherwise. A node writes one keepalive
 * per interval tick (a retry whose first attempt landed unanswered can add one: see the known
 * limits in docs/keepaliled.md). If we saw a peer's version appear as it was written (the anchor),
 * and its first sighting after our reconnection is `beats` versions further with no more than
 * `beats + 1` intervals elapsed since the anchor, it missed no tick: Zookeeper took its writes at
 * every tick over at least `beats - 1` intervals since the anchor. A node whose
 * version did not move over that span was silent while it could have written, so its window keeps
 * that much — and never more than its real silence less one interval, since the span may end up to
 * an interval before our reconnection.
 */

/** What we knew of a peer before the blind spell, and its first sighting after it. */
export interface PeerBeats {
  /** The peer's keepalive version as last seen before the blind spell (the anchor). */
  versionBefore: number;
  /** Our clock when that version appeared. */
  appearedAtMs: number;
  /**
   * Whether we saw it appear as it was written (a watch notification while connected); a version
   * first seen by a watch's first read or right after a reconnection may be much older than that.
   */
  seenLive: boolean;
  /** The version of the first sighting after the reconnection. */
  versionAfter: number;
  /** Our clock at that sighting. */
  atMs: number;
}

/**
 * Milliseconds of Zookeeper taking writes that a peer's beats vouch for; 0 when they vouch for
 * nothing: an anchor not seen live, fewer than 2 new versions (one write may land right after a
 * global outage ends, before we are back), a missed tick (more than one interval per beat, plus
 * one for the tick in flight, elapsed: writes were not taken throughout), or a version that went
 * back (the key was recreated).
 */
export function vouchedMs(p: PeerBeats, intervalMs: number): number {
  const beats = p.versionAfter - p.versionBefore;
  if (!p.seenLive || beats < 2 || intervalMs <= 0) return 0;
  if (p.atMs - p.appearedAtMs > (beats + 1) * intervalMs) return 0;
  return (beats - 1) * intervalMs;
}

/** A node's sighting as far as the rule is concerned. */
export interface WindowStart {
  /** Our clock when its current version appeared (never reset). */
  appearedAtMs: number;
  /** Where its silence window starts now (reset to the reconnection). */
  seenAtMs: number;
}

/**
 * The window start of a node whose version did not move, given `vouched` ms vouched for at `atMs`:
 * no later than now (a restore never shortens a window), no earlier than the vouched span allows
 * nor than one interval after its version appeared.
 */
export function keptWindowStart(s: WindowStart, vouched: number, atMs: number, intervalMs: number): number {
  if (vouched <= 0) return s.seenAtMs;
  return Math.min(s.seenAtMs, Math.max(s.appearedAtMs + intervalMs, atMs - vouched));
}
