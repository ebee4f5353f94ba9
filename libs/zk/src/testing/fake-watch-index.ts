import type { RawWatchEvent } from '../core/session.js';

/** What the index needs to know of a session. */
export interface IndexedSession {
  /** Creation order on its server: notifications go to sessions in this order. */
  readonly order: number;
  notify(e: RawWatchEvent): void;
}

/**
 * The fake server's watch table, by path (a real server's WatchManager): which sessions hold a
 * watch on a path, and which sessions are offline (not connected: they buffer every change until
 * they reconnect, to match it against their watches then). A change is handed to those sessions
 * only, so a write costs its watchers, not every session of the server.
 *
 * Contract: a session is listed under every path it holds a watch on (it may stay listed a little
 * longer: handing it a change it does not watch is a no-op), and among the offline sessions
 * whenever it is alive, not abandoned by its client and not connected (from its creation until it
 * first connects, and after every disconnection).
 */
export class FakeWatchIndex<S extends IndexedSession> {
  private readonly byPath = new Map<string, Set<S>>();
  private readonly offline = new Set<S>();

  /** `s` now holds a watch on `path`. */
  watch(path: string, s: S): void {
    let set = this.byPath.get(path);
    if (!set) {
      set = new Set();
      this.byPath.set(path, set);
    }
    set.add(s);
  }

  /** `s` holds no watch on `path` any more. */
  unwatch(path: string, s: S): void {
    const set = this.byPath.get(path);
    if (!set) return;
    set.delete(s);
    if (set.size === 0) this.byPath.delete(path);
  }

  /** `s` is offline (alive, not connected: it buffers changes) or not (connected, or gone). */
  setOffline(s: S, offline: boolean): void {
    if (offline) this.offline.add(s);
    else this.offline.delete(s);
  }

  /**
   * Hands each event of one applied change to the sessions concerned: every session in creation
   * order, each given the events in order (what handing them to every session would do, as only
   * these can react).
   */
  dispatch(events: readonly RawWatchEvent[]): void {
    const concerned = new Set<S>(this.offline);
    for (const e of events) for (const s of this.byPath.get(e.path) ?? []) concerned.add(s);
    const sessions = [...concerned].sort((a, b) => a.order - b.order);
    for (const s of sessions) for (const e of events) s.notify(e);
  }
}
