import { createServer } from 'node:net';

/**
 * A TCP port that was free on 127.0.0.1 a moment ago (the OS picks it; we close at once). Another
 * process could grab it before the caller binds: good enough for tests, which fail loudly then.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}
