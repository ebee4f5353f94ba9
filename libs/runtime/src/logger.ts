import pino from 'pino';
import type { Logger as PinoLogger, DestinationStream } from 'pino';

export type Logger = PinoLogger;

/** What the original's logging toggles map onto. */
export interface LoggerOptions {
  /** Service name; becomes the `service` field and the journald identifier in systemd mode. */
  service: string;
  node?: string;
  debug?: boolean;
  /** Include the time in each line (`log_dates`). */
  dates?: boolean;
  /** Extra destination, e.g. a file stream (file_logging); stdout is used when absent. */
  destination?: DestinationStream;
}

/**
 * Keys whose values never reach a log line: IPMI and database passwords, wherever they are nested.
 * pino replaces them with "[redacted]".
 */
export const REDACT_PATHS = [
  'pass',
  'password',
  'ipmipassword',
  '*.pass',
  '*.password',
  '*.ipmipassword',
  '*.*.pass',
  '*.*.*.pass',
  '*.*.*.*.pass',
  '*.*.*.*.*.pass',
  'config.pvc.system.fencing.ipmi.pass',
  'config.pvc.coordinator.dns.database.pass',
  'config.pvc.coordinator.metadata.database.pass',
];

/** Builds the root structured logger of a service; components take `logger.child({ component })`. */
export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      name: opts.service,
      level: opts.debug ? 'debug' : 'info',
      base: { service: opts.service, ...(opts.node ? { node: opts.node } : {}) },
      timestamp: opts.dates === false ? false : pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** A logger that writes nowhere, for unit tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
