import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeError, type Logger } from '@pvc/runtime';
import { buildSamples, exposition, EXPOSITION_CONTENT_TYPE, type MetricsInput } from './build.js';
import type { MetricGroup } from './families.js';

/**
 * The metrics endpoint: `GET /metrics` (everything), `/metrics/health` and `/metrics/resource`
 * (the original's split) over plain HTTP on the configured address and port. Each request reads
 * Zookeeper afresh (no cache); a failed read answers 503 with the reason, logged once per
 * request. It never takes keepaliled down: a port that cannot be bound is one error line and the
 * service goes on without metrics.
 */

const ROUTES: ReadonlyMap<string, MetricGroup | undefined> = new Map([
  ['/metrics', undefined], ['/metrics/health', 'health'], ['/metrics/resource', 'resource'],
]);

/** A running endpoint. */
export interface MetricsServer {
  /** `host:port` actually bound (port 0 in the options picks one). */
  readonly address: string;
  close(): Promise<void>;
}

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** Reads one scrape's facts. */
  read: () => Promise<MetricsInput>;
}

async function handle(opts: MetricsServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (!ROUTES.has(path) || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics, /metrics/health or /metrics/resource\n');
    return;
  }
  try {
    const text = await exposition(buildSamples(await opts.read()), ROUTES.get(path));
    res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : text);
  } catch (err) {
    opts.logger.error({ err: describeError(err), path }, 'metrics scrape failed: cannot read Zookeeper');
    res.writeHead(503, { 'content-type': 'text/plain' }).end(`cannot read Zookeeper: ${describeError(err)}\n`);
  }
}

/**
 * Starts the endpoint; resolves undefined (after one error line naming the address, port and
 * reason) when it cannot listen, e.g. the port is in use.
 */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer | undefined> {
  const server = createServer((req, res) => void handle(opts, req, res));
  const bound = await new Promise<AddressInfo | Error>((resolve) => {
    server.once('error', resolve);
    server.listen({ host: opts.host, port: opts.port }, () => resolve(server.address() as AddressInfo));
  });
  if (bound instanceof Error) {
    const code = (bound as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? 'the port is already in use' : code === 'EADDRNOTAVAIL' ? 'the address is not on this host' : bound.message;
    opts.logger.error({ host: opts.host, port: opts.port, code }, `cannot serve metrics on ${opts.host}:${opts.port}: ${why}; keepaliled goes on without metrics`);
    server.close();
    return undefined;
  }
  server.on('error', (err) => opts.logger.error({ err: describeError(err) }, 'metrics server error'));
  const address = `${bound.address}:${bound.port}`;
  opts.logger.info({ address }, `serving metrics on http://${address}/metrics`);
  return {
    address,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
