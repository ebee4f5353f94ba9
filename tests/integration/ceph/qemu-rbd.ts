// A real QEMU (qemu-system-x86_64, no guest: `-machine none -S`) with one RBD drive, run in a
// namespace of the one-host Ceph, driven over QMP. Its block layer (librbd, qemu-block-extra's
// block-rbd.so) takes the image's exclusive lock on the first write, which `write()` makes through
// HMP's `qemu-io` — the lock a running VM holds on its disk.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from '../../support/wait.js';
import type { CephHost } from './ceph-host.js';

/** A running QEMU with `rbd:<image>` as drive `d0`. */
export class QemuRbd {
  private buffer = '';
  private nextId = 0;

  private constructor(private readonly child: ChildProcess, private readonly sock: Socket, private readonly output: () => string) {}

  /** Starts QEMU in `ns` of `ceph` with `image` as drive d0; resolves once QMP answers. */
  static async start(ceph: CephHost, ns: string, image: string): Promise<QemuRbd> {
    if (!existsSync('/usr/lib/x86_64-linux-gnu/qemu/block-rbd.so')) throw new Error('QEMU has no RBD driver: install qemu-block-extra (scripts/setup.sh)');
    const qmp = join(ceph.dir, `qmp-${image.replace('/', '_')}.sock`);
    const args = [
      'netns', 'exec', ns, 'qemu-system-x86_64', '-machine', 'none', '-S', '-display', 'none', '-nodefaults',
      '-qmp', `unix:${qmp},server=on,wait=off`,
      '-drive', `file=rbd:${image}:conf=${ceph.conf},format=raw,if=none,id=d0,cache=none`,
    ];
    const child = spawn('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const sock = await waitUntil(() => (child.exitCode === null ? connect(qmp) : Promise.reject(new Error(`qemu exited ${child.exitCode}: ${out}`))), {
        what: `QEMU's QMP socket ${qmp}`, timeoutMs: 20_000, intervalMs: 100,
      });
      const q = new QemuRbd(child, sock, () => out);
      sock.on('data', (d: Buffer) => (q.buffer += d.toString()));
      await q.command('qmp_capabilities');
      return q;
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }

  /** The QEMU process id (the `ip netns exec` child execs QEMU). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Writes 4 KiB of `pattern` at `offset` (default 0) through QEMU's block layer and waits
   * (bounded) for qemu-io's report, which QEMU prints on its stdout; resolves with that line
   * (`wrote 4096/4096 bytes at offset 0` or the error).
   */
  async write(pattern: number, offset = 0): Promise<string> {
    const before = this.output().length;
    await this.command('human-monitor-command', { 'command-line': `qemu-io d0 "write -P ${pattern} ${offset} 4096"` });
    const line = await waitUntil(() => this.output().slice(before).split('\n').find((l) => /wrote|error|failed/i.test(l)), {
      what: 'qemu-io\'s report of the write on QEMU\'s output', timeoutMs: 20_000, intervalMs: 50,
    });
    return line ?? '';
  }

  /** Stops QEMU (SIGKILL: a blocklisted librbd may hang on close) and waits for its exit. */
  async stop(): Promise<void> {
    this.sock.destroy();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exit = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGKILL');
    await exit;
  }

  private async command(execute: string, args?: Record<string, unknown>): Promise<unknown> {
    const id = `c${this.nextId++}`;
    this.sock.write(`${JSON.stringify({ execute, ...(args && { arguments: args }), id })}\n`);
    const line = await waitUntil(() => this.buffer.split('\n').find((l) => l.includes(`"id": "${id}"`) || l.includes(`"id":"${id}"`)), {
      what: `QMP answer to ${execute}`, timeoutMs: 20_000, intervalMs: 20,
    });
    const msg = JSON.parse(line ?? '{}') as { return?: unknown; error?: { desc?: string } };
    if (msg.error) throw new Error(`QMP ${execute}: ${msg.error.desc ?? JSON.stringify(msg.error)}\n${this.output()}`);
    return msg.return;
  }
}

function connect(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection(path);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}
