/**
 * The Zookeeper timing PVC ships for the coordinators' servers (`deploy/zookeeper/zoo.cfg`, which
 * the packages install as `/etc/zookeeper/conf/zoo.cfg`) and runs in the test cluster
 * (`tests/cluster/harness/zookeeper.ts`), and the session timeout of keepaliled's client. Why these
 * values: docs/keepaliled.md, "Zookeeper timing".
 *
 * @module
 */

/** Server timing: `tickTime`, `initLimit`, `syncLimit` (the last two in ticks). */
export const ZK_SERVER_TIMING = {
  /**
   * 500 ms (Zookeeper's default is 2000): the leader pings followers every half tick, and the
   * session timeouts a client may ask for are 2–20 ticks (1–10 s).
   */
  tickTimeMs: 500,
  /** 20 ticks = 10 s for a follower to connect to and sync with a new leader (small PVC trees). */
  initLimit: 20,
  /**
   * 4 ticks = 2 s: a follower that hears nothing from its leader for this long drops it and starts
   * an election; the leader drops a follower that does not answer for as long. With the default
   * (2000 × 5) the survivors of a dead leader waited 10 s before they could elect another, so
   * fencing stalled for 10 s (issue 14).
   */
  syncLimit: 4,
  /**
   * `cnxTimeout` (ms; Zookeeper reads it from zoo.cfg as the `zookeeper.cnxTimeout` property,
   * default 5000): how long a server waits to connect to a peer's election port. The election
   * sends its notifications from one thread, so a peer that died without a word (host powered
   * off) held every round of the election after a dead leader for up to that long (the test
   * cluster needed ~5 s after the leader's death before clients were served again).
   */
  cnxTimeoutMs: 1_000,
  /**
   * `fastleader.maxNotificationInterval` (ms; default 60000): the longest pause between two
   * election rounds while peers are unreachable; a peer that comes back (power-on) is heard
   * within this.
   */
  maxNotificationIntervalMs: 2_000,
} as const;

/**
 * keepaliled's session timeout, ms: the largest a server with {@link ZK_SERVER_TIMING} grants (20
 * ticks). It bounds how long a cut-off primary keeps its duties (it drops them when its session
 * expires locally) and how long a dead node's ephemeral lock contenders stay; fencing does not wait
 * for it (a dead holder's lock is broken after the detection window, `LivenessTracker.deadHolderGuard`).
 * Shorter sessions expire on a loaded machine for no reason.
 */
export const KEEPALIVED_SESSION_TIMEOUT_MS = 10_000;

/** The timing lines of a `zoo.cfg`. */
export function zooCfgTimingLines(): string[] {
  const t = ZK_SERVER_TIMING;
  return [
    `tickTime=${t.tickTimeMs}`, `initLimit=${t.initLimit}`, `syncLimit=${t.syncLimit}`,
    `cnxTimeout=${t.cnxTimeoutMs}`, `fastleader.maxNotificationInterval=${t.maxNotificationIntervalMs}`,
  ];
}
