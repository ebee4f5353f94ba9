// Makes a TCP port of this (root) network namespace reachable as 127.0.0.1:<port> inside another
// namespace, through a unix socket (unix sockets are not bound to a network namespace): a service
// started in the one-host Ceph's namespace (it must reach the mon there) can then use the
// Zookeeper test server that listens on this namespace's loopback. Test plumbing only.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '../../support/wait.js';

/** A running bridge. */
export interface NsBridge {
  close(): Promise<void>;
}

function splice(a: Socket, b: Socket): void {
  a.pipe(b).pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

// Run by node inside the namespace: listen on 127.0.0.1:<port>, forward each connection to the socket.
const INNER = `const net = require('net'); const [sock, port] = process.argv.slice(1);
net.createServer((c) => { const u = net.connect(sock); c.pipe(u).pipe(c);
  for (const [x, y] of [[c, u], [u, c]]) { x.on('error', () => y.destroy()); x.on('close', () => y.destroy()); } })
  .listen(Number(port), '127.0.0.1', () => console.log('ready'));`;

/** Bridges 127.0.0.1:`port` in namespace `ns` to 127.0.0.1:`port` here; resolves once it listens there. */
export async function bridgePortIntoNamespace(ns: string, port: number): Promise<NsBridge> {
  const dir = mkdtempSync(join(tmpdir(), 'pvc-nsbridge-'));
  const sock = join(dir, 'sock');
  const server: Server = createServer((c) => splice(c, connect(port, '127.0.0.1')));
  await new Promise<void>((resolve) => server.listen(sock, resolve));
  const child: ChildProcess = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', INNER, sock, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const close = async (): Promise<void> => {
    child.kill('SIGKILL');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(() => Promise.resolve(out), { what: `the port bridge into ${ns} listening`, timeoutMs: 10_000, intervalMs: 50, until: (o) => o.includes('ready') });
  } catch (err) {
    await close();
    throw err;
  }
  return { close };
}
