/**
 * The metadata API's HTTP listener (Node's http, no framework): each request becomes a
 * {@link MetadataRequest} with the connection's source address as the caller, and the answer is
 * written back (no body for HEAD). Bound to one address and port, 169.254.169.254:80 in service;
 * tests pass a loopback address and a free port.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeError, type Logger } from '@pvc/runtime';
import type { MetadataRequest, MetadataResponse } from './routes.js';

/** The port the API's life cycle drives (the fake in specs records calls). */
export interface HttpListener {
  /** Listens; rejects when the address cannot be bound (not on this host, in use, no permission). */
  listen(): Promise<void>;
  /** Stops listening and drops open connections; idempotent. */
  close(): Promise<void>;
}

/** Options of {@link MetadataHttpServer}. */
export interface MetadataHttpOptions {
  readonly host: string;
  readonly port: number;
  readonly answer: (req: MetadataRequest) => Promise<MetadataResponse>;
  readonly logger: Logger;
}

export class MetadataHttpServer implements HttpListener {
  private server: Server | undefined;

  constructor(private readonly o: MetadataHttpOptions) {}

  /** The bound port (after listen; the configured one before). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? this.o.port;
  }

  async listen(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      const r: MetadataRequest = { method: req.method ?? 'GET', url: req.url ?? '/', caller: req.socket.remoteAddress ?? '' };
      this.o.answer(r).then(
        (a) => {
          const body = Buffer.from(a.body, 'utf8');
          res.writeHead(a.status, { 'content-type': a.contentType, 'content-length': body.length, ...a.headers });
          res.end(r.method === 'HEAD' ? undefined : body);
        },
        (err: unknown) => {
          this.o.logger.error({ caller: r.caller, url: r.url, err: describeError(err) }, 'metadata request failed');
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
        },
      );
    });
    server.requestTimeout = 15_000;
    server.headersTimeout = 10_000;
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.o.logger.error({ err: describeError(err) }, 'metadata API listener error'));
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
