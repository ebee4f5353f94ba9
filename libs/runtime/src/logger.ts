import { join } from 'node:path';
import pino from 'pino';
import type { Logger as PinoLogger, DestinationStream } from 'pino';
import { humanDestination, openLogFile, type ReopenableFile } from './log-output.js';

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

/** Where a service's log lines go: the original's `logging` toggles. */
export interface LogOutputs {
  /** `stdout_logging`: JSON lines on stdout (journald in systemd mode). Default true. */
  stdout?: boolean;
  /**
   * `log_colours`: when stdout is a terminal, lines there are rendered for humans, the level
   * coloured if true. Pipes and journald always get JSON lines.
   */
  colours?: boolean;
  /** `file_logging`: also append JSON lines to `<directory>/<service>.log`. */
  fileDirectory?: string;
  /** Stdout stream (tests); default `process.stdout`'s file descriptor, synchronously. */
  stdoutStream?: { write(s: string): unknown; isTTY?: boolean };
  /** Further destinations receiving every JSON line (redacted), e.g. the Zookeeper node log. */
  extraStreams?: readonly DestinationStream[];
}

/** A service's logger together with the handle that reopens its log file (SIGHUP). */
export interface ServiceLogging {
  readonly logger: Logger;
  /** The log file's path, when file logging is on. */
  readonly file: string | undefined;
  /** Closes and reopens the log file at the same path (after logrotate renamed it). No-op without a file. */
  reopen(): void;
  /** Flushes and closes the log file. */
  close(): void;
}

/** Path of a service's log file in `directory`. */
export function logFilePath(directory: string, service: string): string {
  return join(directory, `${service}.log`);
}

function stdoutDestination(outputs: LogOutputs): DestinationStream {
  const out = outputs.stdoutStream;
  const tty = out ? out.isTTY === true : process.stdout.isTTY === true;
  if (tty) return humanDestination(out ?? process.stdout, outputs.colours ?? false);
  return out ? { write: (s: string) => void out.write(s) } : pino.destination({ dest: 1, sync: true });
}

/**
 * Builds a service's logger from the logging settings: stdout and/or a log file and any extra
 * streams (all JSON lines, passwords redacted). With none, lines are dropped. The file can be reopened on SIGHUP.
 */
export function createServiceLogging(opts: Omit<LoggerOptions, 'destination'> & LogOutputs): ServiceLogging {
  const streams: pino.StreamEntry[] = [];
  if (opts.stdout ?? true) streams.push({ stream: stdoutDestination(opts), level: 'trace' });
  const file = opts.fileDirectory === undefined ? undefined : logFilePath(opts.fileDirectory, opts.service);
  const fileStream: ReopenableFile | undefined = file === undefined ? undefined : openLogFile(file);
  if (fileStream) streams.push({ stream: fileStream, level: 'trace' });
  for (const stream of opts.extraStreams ?? []) streams.push({ stream, level: 'trace' });
  const destination: DestinationStream = streams.length === 0 ? { write: () => undefined } : pino.multistream(streams);
  const logger = createLogger({ ...opts, destination });
  return {
    logger,
    file,
    reopen: () => fileStream?.reopen(),
    close: () => {
      fileStream?.flushSync();
      fileStream?.end();
    },
  };
}

/** A logger that writes nowhere, for unit tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
