/**
 * The real TCP request adapter handed to plugins as `ctx.tcpRequest`: connect, write one request,
 * read until the peer closes. Bounded by a timeout and an abort signal.
 *
 * @module
 */
import { connect } from 'node:net';
import { AbortedError, PvcError, TimeoutError } from '@pvc/runtime';

/** Default bound of one request, ms. */
export const DEFAULT_TCP_TIMEOUT_MS = 5_000;
/** Replies longer than this are cut (a four-letter word answer is a few hundred bytes). */
const MAX_REPLY = 1 << 20;

/** Raised when the connection fails (refused, unreachable, reset). */
export class TcpRequestError extends PvcError {
  constructor(target: string, detail: string, cause?: unknown) {
    super('TCP_FAILED', `${target}: ${detail}`, { cause, retryable: true });
  }
}

/** Sends `request` to `host:port` and resolves with the whole reply once the peer closes. */
export function tcpRequest(
  host: string,
  port: number,
  request: string,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string> {
  const target = `${host}:${port}`;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TCP_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new AbortedError(`TCP request to ${target}`));
    let reply = '';
    let settled = false;
    const sock = connect({ host, port });
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      sock.destroy();
      if (err) reject(err);
      else resolve(reply);
    };
    const onAbort = (): void => finish(new AbortedError(`TCP request to ${target}`));
    // A socket timer is I/O plumbing of this adapter, not logic timing: the Clock port does not apply.
    const timer = setTimeout(() => finish(new TimeoutError(`TCP request to ${target}`, timeoutMs)), timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(request));
    sock.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.length > MAX_REPLY) finish();
    });
    sock.on('end', () => finish());
    sock.on('close', () => finish());
    sock.on('error', (err) => finish(new TcpRequestError(target, err.message, err)));
  });
}
