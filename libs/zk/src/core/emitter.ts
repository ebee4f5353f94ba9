import type { Logger } from '@pvc/runtime';

/**
 * A tiny typed event emitter. A throwing listener is logged and does not stop the others, so one
 * faulty subscriber can never break session handling.
 */
export class Emitter<M extends object> {
  private readonly listeners = new Map<keyof M, Set<(payload: never) => void>>();

  constructor(private readonly logger?: Logger) {}

  /** Adds a listener; returns its removal function. */
  on<E extends keyof M>(event: E, listener: (payload: M[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    const entry = listener as (payload: never) => void;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  /** Calls every listener of `event` synchronously, in registration order. */
  emit<E extends keyof M>(event: E, payload: M[E]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const l of [...set]) {
      try {
        (l as (p: M[E]) => void)(payload);
      } catch (err) {
        this.logger?.warn({ err, event: String(event) }, 'zk event listener threw');
      }
    }
  }

  /** Drops every listener. */
  clear(): void {
    this.listeners.clear();
  }
}
