import { AbortedError, describeError, type Clock, type Exec, type Logger } from '@pvc/runtime';

/** Options of {@link watchLibvirtEvents}. */
export interface LibvirtEventsOptions {
  exec: Exec;
  clock: Clock;
  logger: Logger;
  uri: string;
  /** Called for every lifecycle event line (the reconciler's trigger). */
  onEvent: () => void;
  signal: AbortSignal;
  /**
   * Each `virsh event` runs at most this long and is then restarted: if vmd is SIGKILLed, its
   * orphaned virsh ends by itself within this bound. Default 60 s.
   */
  runSeconds?: number;
}

/**
 * Libvirt lifecycle events through `virsh event --all --loop` (the binding has no event API). Only
 * a hint that speeds up reconciling after a guest powers off or crashes: correctness rests on the
 * periodic resync. A failing virsh is restarted after a pause.
 */
export async function watchLibvirtEvents(o: LibvirtEventsOptions): Promise<void> {
  const secs = o.runSeconds ?? 60;
  while (!o.signal.aborted) {
    try {
      const child = o.exec.spawn('virsh', ['-c', o.uri, 'event', '--all', '--loop', '--timeout', String(secs)], { signal: o.signal });
      child.onLine((line) => {
        if (line.startsWith('event ')) o.onEvent();
      });
      const code = await child.exited;
      if (code !== 0 && !o.signal.aborted) {
        o.logger.debug({ code }, 'virsh event ended; restarting in 5 s');
        await o.clock.sleep(5000, o.signal);
      }
    } catch (err) {
      if (err instanceof AbortedError || o.signal.aborted) return;
      o.logger.warn({ err: describeError(err) }, 'cannot watch libvirt events; retrying in 5 s');
      await o.clock.sleep(5000, o.signal).catch(() => undefined);
    }
  }
}
