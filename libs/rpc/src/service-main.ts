import { parseArgs } from 'node:util';
import { ConfigError, checkConfigMain, loadConfig, type Config } from '@pvc/config';
import { createServiceLogging, createShutdown, describeError, realClock, type Logger, type ServiceLogging, type Shutdown } from '@pvc/runtime';
import { startLocalServer, type LocalServer } from './server.js';
import { socketPath, unixTarget, type ServiceName } from './sockets.js';
import { getStatus } from './status.js';
import { serviceZkLog, type ZkNodeLog } from './zk-log.js';
import { setBadValueLogger } from '@pvc/zk';
import type * as grpc from '@grpc/grpc-js';

/** Set to `1` by the standalone supervisor on the children it spawns with an IPC channel. */
export const SUPERVISED_ENV = 'PVC_SUPERVISED';
/** How long a service whose supervisor died gets for its graceful stop before it exits anyway (the supervisor's SIGKILL bound). */
export const SUPERVISOR_GONE_EXIT_MS = 15_000;

/** The IPC channel to a supervising parent, as serviceMain watches it (`process`, or a fake in tests). */
export interface ParentChannel {
  readonly connected: boolean;
  once(event: 'disconnect', listener: () => void): unknown;
  removeListener(event: 'disconnect', listener: () => void): unknown;
}

/** What a service's own code receives once the common start-up has succeeded. */
export interface ServiceContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly shutdown: Shutdown;
  readonly server: LocalServer;
  /** Values of the service's own flags ({@link ServiceMainOptions.flags}). */
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
  /** The node log in Zookeeper: `attach` the service's ZK client, `flush` before closing it. */
  readonly zkLog: ZkNodeLog;
}

/** A service-specific command-line flag (in addition to the common ones). */
export interface ServiceFlag {
  type: 'string' | 'boolean';
  /** One line for --help. */
  help: string;
}

/** Output streams, injectable for tests. */
export interface ServiceIo {
  out: { write(s: string): unknown };
  err: { write(s: string): unknown };
}

export interface ServiceMainOptions {
  service: ServiceName;
  version: string;
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  io?: ServiceIo;
  /** Adds the service's gRPC handlers before the socket opens. */
  register?: (server: grpc.Server) => void;
  /** The service's work; resolves when it has stopped after `ctx.shutdown.signal` aborted. */
  run?: (ctx: ServiceContext) => Promise<void>;
  /** Tests pass false so signals of the test process are left alone. */
  installSignalHandlers?: boolean;
  /** The service's own flags, by long name (without the dashes). */
  flags?: Readonly<Record<string, ServiceFlag>>;
  /** Tests trigger shutdown through this. */
  onShutdownReady?: (shutdown: Shutdown) => void;
  /**
   * The channel whose closing means "supervisor gone: stop". Default: `process` when the supervisor
   * spawned this service (`PVC_SUPERVISED=1` and an IPC channel), else none (systemd, by hand).
   * `null`: none.
   */
  parentChannel?: ParentChannel | null;
}

const USAGE = (s: string, extra: Readonly<Record<string, ServiceFlag>> = {}): string =>
  `usage: ${s} [--config <pvcnoded.yaml>] [--check-config] [--version] [--help]` +
  Object.entries(extra).map(([n, f]) => ` [--${n}${f.type === 'string' ? ' <value>' : ''}]`).join('') +
  `\n  The configuration file is --config, else $PVCD_CONFIG_FILE, else /etc/pvc/pvcnoded.yaml.\n` +
  Object.entries(extra).map(([n, f]) => `  --${n}: ${f.help}\n`).join('');

interface ParsedFlags {
  help: boolean;
  version: boolean;
  own: Record<string, string | boolean | undefined>;
}

function parseFlags(argv: readonly string[], extra: Readonly<Record<string, ServiceFlag>> = {}): ParsedFlags | string {
  try {
    const own = Object.fromEntries(Object.entries(extra).map(([n, f]) => [n, { type: f.type }]));
    const { values } = parseArgs({
      args: [...argv],
      options: {
        ...own,
        config: { type: 'string' },
        'check-config': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
    });
    const ownValues = Object.fromEntries(Object.keys(extra).map((n) => [n, (values as Record<string, string | boolean | undefined>)[n]]));
    return { help: values.help === true, version: values.version === true, own: ownValues };
  } catch (err) {
    return describeError(err);
  }
}

/**
 * File logging, stdout logging, colours and dates from the config, plus the node log in Zookeeper
 * (written once the service attaches its client); SIGHUP reopens the log file.
 */
function startLogging(service: string, config: Config, installHandlers: boolean): { logging: ServiceLogging; zkLog: ZkNodeLog; stop(): void } {
  const l = config.system.configuration.logging;
  const zk = serviceZkLog(service, config, realClock);
  const logging = createServiceLogging({
    service,
    node: config.node,
    debug: config.debug,
    dates: l.log_dates,
    colours: l.log_colours,
    stdout: l.stdout_logging,
    fileDirectory: l.file_logging ? config.system.configuration.directories.log_directory : undefined,
    extraStreams: zk.streams,
  });
  zk.reportTo(logging.logger.child({ component: 'zk-log' }));
  const onHup = (): void => {
    logging.reopen();
    logging.logger.info({ file: logging.file ?? null }, 'SIGHUP: log file reopened');
  };
  if (installHandlers) process.on('SIGHUP', onHup);
  const stop = (): void => {
    process.removeListener('SIGHUP', onHup);
    void zk.close();
    logging.close();
  };
  return { logging, zkLog: zk.handle, stop };
}

function supervisorChannel(opts: ServiceMainOptions): ParentChannel | undefined {
  if (opts.parentChannel !== undefined) return opts.parentChannel ?? undefined;
  return opts.env[SUPERVISED_ENV] === '1' && typeof process.send === 'function' ? process : undefined;
}

/**
 * A supervised service stops when its supervisor dies: the IPC channel closes (the kernel closes
 * the supervisor's end, even on SIGKILL) and the normal graceful stop begins — for vmd that leaves
 * every VM running (libvirtd owns them). With `hardExit`, a stop that hangs ends the process after
 * {@link SUPERVISOR_GONE_EXIT_MS}, as the supervisor's SIGKILL would have. Returns the unwatch.
 */
function watchSupervisor(channel: ParentChannel | undefined, shutdown: Shutdown, logger: Logger, hardExit: boolean): () => void {
  if (!channel) return () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const gone = (): void => {
    logger.warn({ reason: 'the IPC channel to the supervisor closed' }, 'supervisor gone: stopping');
    shutdown.trigger('supervisor gone');
    if (!hardExit) return;
    timer = setTimeout(() => {
      logger.error({ afterMs: SUPERVISOR_GONE_EXIT_MS }, 'graceful stop did not finish after the supervisor went: exiting');
      process.exit(1);
    }, SUPERVISOR_GONE_EXIT_MS).unref();
  };
  if (channel.connected) channel.once('disconnect', gone);
  else gone();
  return () => {
    channel.removeListener('disconnect', gone);
    clearTimeout(timer);
  };
}

/** Who answers on a socket that is in use (StatusService: service and pid), if anyone does quickly. */
async function socketHolder(path: string): Promise<{ service: string; pid: number } | undefined> {
  const s = await getStatus(unixTarget(path), { deadlineMs: 1000 }).catch(() => undefined);
  return s && { service: s.service, pid: s.pid };
}

async function loadOrReport(opts: ServiceMainOptions, io: ServiceIo): Promise<Config | undefined> {
  try {
    return await loadConfig({ argv: [...opts.argv], env: opts.env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err.write(`${opts.service}: ${err.message}\n`);
    return undefined;
  }
}

/**
 * The common life of every service: flags, config (every problem reported, exit 2, nothing started),
 * logger, the local gRPC socket with health and status, the service's own work, and a clean stop on
 * SIGTERM/SIGINT. Returns the process exit status; main.ts only calls this.
 */
export async function serviceMain(opts: ServiceMainOptions): Promise<number> {
  const io = opts.io ?? { out: process.stdout, err: process.stderr };
  const flags = parseFlags(opts.argv, opts.flags);
  if (typeof flags === 'string') {
    io.err.write(`${opts.service}: ${flags}\n${USAGE(opts.service, opts.flags)}`);
    return 2;
  }
  if (flags.help) return io.out.write(USAGE(opts.service, opts.flags)), 0;
  if (flags.version) return io.out.write(`${opts.service} ${opts.version}\n`), 0;
  if (opts.argv.includes('--check-config')) return checkConfigMain([...opts.argv], opts.env, io);
  const config = await loadOrReport(opts, io);
  if (!config) return 2;
  const installHandlers = opts.installSignalHandlers ?? true;
  const logs = startLogging(opts.service, config, installHandlers);
  // Every service reads ZK values through the key table: a bad value is logged once, here.
  setBadValueLogger(logs.logging.logger.child({ component: 'zk-values' }));
  const shutdown = createShutdown(installHandlers);
  opts.onShutdownReady?.(shutdown);
  const unwatch = watchSupervisor(supervisorChannel(opts), shutdown, logs.logging.logger, installHandlers);
  try {
    return await runWithServer(opts, config, { logger: logs.logging.logger, zkLog: logs.zkLog }, shutdown, flags.own);
  } finally {
    unwatch();
    setBadValueLogger(undefined);
    logs.stop();
  }
}

async function runWithServer(
  opts: ServiceMainOptions,
  config: Config,
  logs: { logger: Logger; zkLog: ZkNodeLog },
  shutdown: Shutdown,
  flags: ParsedFlags['own'],
): Promise<number> {
  const { logger, zkLog } = logs;
  let server: LocalServer;
  const path = socketPath(config.system.configuration.directories.dynamic_directory, opts.service);
  try {
    server = await startLocalServer({ service: opts.service, node: config.node, version: opts.version, socketPath: path, logger, register: opts.register });
  } catch (err) {
    const holder = await socketHolder(path);
    const held = holder ? `: ${path} is held by ${holder.service} pid ${holder.pid}` : '';
    logger.error({ err: describeError(err), socket: path, ...(holder && { heldBy: holder }) }, `cannot start the local gRPC server${held}`);
    return 1;
  }
  server.setState('running');
  logger.info({ version: opts.version, mode: config.mode }, `${opts.service} started`);
  let status = 0;
  try {
    await (opts.run ? opts.run({ config, logger, shutdown, server, flags, zkLog }) : shutdown.requested);
  } catch (err) {
    logger.error({ err: describeError(err) }, `${opts.service} failed`);
    status = 1;
  }
  server.setState('stopping');
  await server.close();
  logger.info({ reason: shutdown.signal.aborted ? String(shutdown.signal.reason?.message ?? '') : 'finished' }, `${opts.service} stopped`);
  return status;
}
