import { parseArgs } from 'node:util';
import { ConfigError, checkConfigMain, loadConfig, type Config } from '@pvc/config';
import { createLogger, createShutdown, describeError, type Logger, type Shutdown } from '@pvc/runtime';
import { startLocalServer, type LocalServer } from './server.js';
import { socketPath, type ServiceName } from './sockets.js';
import type * as grpc from '@grpc/grpc-js';

/** What a service's own code receives once the common start-up has succeeded. */
export interface ServiceContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly shutdown: Shutdown;
  readonly server: LocalServer;
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
  /** Tests trigger shutdown through this. */
  onShutdownReady?: (shutdown: Shutdown) => void;
}

const USAGE = (s: string): string =>
  `usage: ${s} [--config <pvcnoded.yaml>] [--check-config] [--version] [--help]\n` +
  `  The configuration file is --config, else $PVCD_CONFIG_FILE, else /etc/pvc/pvcnoded.yaml.\n`;

function parseFlags(argv: readonly string[]): { help: boolean; version: boolean } | string {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        config: { type: 'string' },
        'check-config': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
    });
    return { help: values.help === true, version: values.version === true };
  } catch (err) {
    return describeError(err);
  }
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
  const flags = parseFlags(opts.argv);
  if (typeof flags === 'string') {
    io.err.write(`${opts.service}: ${flags}\n${USAGE(opts.service)}`);
    return 2;
  }
  if (flags.help) return io.out.write(USAGE(opts.service)), 0;
  if (flags.version) return io.out.write(`${opts.service} ${opts.version}\n`), 0;
  if (opts.argv.includes('--check-config')) return checkConfigMain([...opts.argv], opts.env, io);
  const config = await loadOrReport(opts, io);
  if (!config) return 2;
  const logging = config.system.configuration.logging;
  const logger = createLogger({ service: opts.service, node: config.node, debug: config.debug, dates: logging.log_dates });
  const shutdown = createShutdown(opts.installSignalHandlers ?? true);
  opts.onShutdownReady?.(shutdown);
  return runWithServer(opts, config, logger, shutdown);
}

async function runWithServer(opts: ServiceMainOptions, config: Config, logger: Logger, shutdown: Shutdown): Promise<number> {
  let server: LocalServer;
  try {
    server = await startLocalServer({
      service: opts.service,
      node: config.node,
      version: opts.version,
      socketPath: socketPath(config.system.configuration.directories.dynamic_directory, opts.service),
      logger,
      register: opts.register,
    });
  } catch (err) {
    logger.error({ err: describeError(err) }, 'cannot start the local gRPC server');
    return 1;
  }
  server.setState('running');
  logger.info({ version: opts.version, mode: config.mode }, `${opts.service} started`);
  let status = 0;
  try {
    await (opts.run ? opts.run({ config, logger, shutdown, server }) : shutdown.requested);
  } catch (err) {
    logger.error({ err: describeError(err) }, `${opts.service} failed`);
    status = 1;
  }
  server.setState('stopping');
  await server.close();
  logger.info({ reason: shutdown.signal.aborted ? String(shutdown.signal.reason?.message ?? '') : 'finished' }, `${opts.service} stopped`);
  return status;
}
