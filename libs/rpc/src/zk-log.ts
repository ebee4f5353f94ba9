import type { Config } from '@pvc/config';
import type { Clock, Logger } from '@pvc/runtime';
import { ZkLogSink, type ZkClient, type ZkLogSinkState } from '@pvc/zk';

/**
 * A service's handle on the node log in Zookeeper (`/logs/<node>/messages`, what `pvc node log`
 * shows). Lines are buffered from the start of the process; they are written once the service
 * hands over its ZK client. Every method is a no-op when `zookeeper_logging` is off or
 * `node_log_lines` is 0.
 */
export interface ZkNodeLog {
  /** Starts writing through the service's ZK client (earlier lines first). Stops when it closes. */
  attach(zk: ZkClient): void;
  /** Writes what is buffered; call it just before closing the client. Bounded, never rejects. */
  flush(): Promise<void>;
  /** This service will never have a ZK client: stop buffering. */
  off(): void;
}

/** The node log of a service together with the pino stream that feeds it. */
export interface ServiceZkLog {
  readonly handle: ZkNodeLog;
  /** Extra log destination for `createServiceLogging` (none when off). */
  readonly streams: readonly ZkLogSink[];
  /** Reports the sink's state changes (one line per change) through `logger`. */
  reportTo(logger: Logger): void;
  close(): Promise<void>;
}

const OFF: ZkNodeLog = { attach: () => undefined, flush: () => Promise.resolve(), off: () => undefined };

/** Builds a service's ZK node log from `system.configuration.logging` (zookeeper_logging, node_log_lines). */
export function serviceZkLog(service: string, config: Config, clock: Clock): ServiceZkLog {
  const l = config.system.configuration.logging;
  if (!l.zookeeper_logging || l.node_log_lines === 0) {
    return { handle: OFF, streams: [], reportTo: () => undefined, close: () => Promise.resolve() };
  }
  let report: ((state: ZkLogSinkState, d: { error?: string; dropped?: number }) => void) | undefined;
  const sink = new ZkLogSink({
    service, node: config.node, clock, maxLines: l.node_log_lines, onStateChange: (s, d) => report?.(s, d),
  });
  const handle: ZkNodeLog = {
    attach: (zk) => sink.attach(zk),
    flush: () => sink.flush(),
    off: () => void sink.close(),
  };
  return {
    handle,
    streams: [sink],
    reportTo: (logger) => {
      report = (state, d) => {
        if (state === 'failing') logger.warn({ error: d.error }, 'cannot write the node log to Zookeeper; keeping the newest lines until it can');
        else if (state === 'writing' && d.dropped !== undefined) logger.warn({ dropped: d.dropped }, 'node log lines were dropped while Zookeeper could not be written');
        else if (state === 'writing') logger.info({ key: `/logs/${config.node}/messages` }, 'writing the node log to Zookeeper');
      };
    },
    close: () => sink.close(),
  };
}
