/**
 * Shared rig of the CLI integration tests: one real Zookeeper per test file, `pvc` run in-process
 * (`runCli` with buffered stdout/stderr and `PVC_ZK` pointing at the server), a direct ZK client
 * for arranging and checking the tree, and registered nodes that look like running daemons.
 */
import { realClock } from '@pvc/runtime';
import { connectZk, newNodeObject, paths, type RealZkClient } from '@pvc/zk';
import { runCli } from '../../../apps/cli/src/cli.js';
import type { CliIo, TextSink } from '../../../apps/cli/src/io.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { after, before, beforeEach } from 'node:test';
import { join } from 'node:path';

/** What one `pvc` invocation did. */
export interface PvcRun {
  code: number;
  stdout: string;
  stderr: string;
}

class Buffer implements TextSink {
  text = '';
  constructor(readonly isTTY = false) {}
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

/** Options of a registered node. */
export interface FakeNodeOptions {
  mode?: 'coordinator' | 'hypervisor';
  daemonState?: string;
  domainState?: string;
  routerState?: string;
  memTotalMiB?: number;
  memFreeMiB?: number;
  cpus?: number;
  health?: number | 'None';
}

/** A real ZK, a client, and `pvc` bound to it. */
export class CliRig {
  private constructor(readonly server: ZkTestServer, readonly zk: RealZkClient) {}

  static async start(): Promise<CliRig> {
    const server = await ZkTestServer.start();
    const zk = await connectZk({ hosts: [server.hostPort], clock: realClock, spinDelayMs: 100 });
    const rig = new CliRig(server, zk);
    mkdirSync(rig.dir);
    return rig;
  }

  /** A scratch directory for input files (removed with the server by `destroy`). */
  get dir(): string {
    return join(this.server.dir, 'files');
  }

  /** Environment of every run: the server, no colour, a private connection store. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return { PVC_ZK: this.server.hostPort, PVC_CLIENT_CONFIG: `${this.server.dir}/clusters.yaml`, HOME: this.server.dir, ...extra };
  }

  /** Runs `pvc <args>` in-process. */
  pvc(args: readonly string[], opts: { env?: Record<string, string>; tty?: boolean; signal?: AbortSignal } = {}): Promise<PvcRun> {
    return this.pvcLive(args, opts).done;
  }

  /**
   * Starts `pvc <args>` in-process and gives its output so far (`output()`), for a test that waits
   * for a line of a long-running command (`--follow`) before it acts again.
   */
  pvcLive(args: readonly string[], opts: { env?: Record<string, string>; tty?: boolean; signal?: AbortSignal } = {}): { output(): string; done: Promise<PvcRun> } {
    const stdout = new Buffer(opts.tty);
    const stderr = new Buffer(opts.tty);
    const io: CliIo = {
      stdout, stderr, env: opts.env ?? this.env(), clock: realClock,
      readFile: (p) => readFile(p, 'utf8'),
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    const done = runCli(args, io).then((code) => ({ code, stdout: stdout.text, stderr: stderr.text }));
    return { output: () => stdout.text, done };
  }

  /** Runs `pvc <args>` and fails with its output unless it exits 0. */
  async ok(...args: string[]): Promise<string> {
    const r = await this.pvc(args);
    if (r.code !== 0) throw new Error(`pvc ${args.join(' ')} → exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  }

  /** Empties the tree (everything but /zookeeper) and runs `pvc cluster init`. */
  async reset(): Promise<void> {
    for (const child of await this.zk.children('/')) if (child !== 'zookeeper') await this.zk.delete(`/${child}`);
    await this.ok('cluster', 'init');
  }

  /** Registers a node the way the supervisor does, then sets it to look like a running daemon. */
  async addNode(name: string, o: FakeNodeOptions = {}): Promise<void> {
    const mode = o.mode ?? 'coordinator';
    const obj = newNodeObject({
      name, daemonMode: mode, nowMs: Date.now(), staticData: `${o.cpus ?? 8} 6.1.0-test x86_64 x86_64`, pvcVersion: '0.1.0',
      ipmi: { hostname: `${name}-lom`, username: 'admin', password: 'Secret-IPMI-pass' },
    });
    await this.zk.createObject(obj.root, obj.entries);
    const k = paths.node(name);
    const total = o.memTotalMiB ?? 16384;
    await this.zk.write([
      [k.daemonState, o.daemonState ?? 'run'],
      [k.domainState, o.domainState ?? 'ready'],
      [k.routerState, o.routerState ?? (mode === 'coordinator' ? 'secondary' : 'client')],
      [k.memTotal, String(total)],
      [k.memFree, String(o.memFreeMiB ?? total - 1024)],
      [k.memUsed, String(1024)],
      [k.monitoringHealth, String(o.health ?? 100)],
    ]);
  }

  async destroy(): Promise<void> {
    await this.zk.close().catch(() => undefined);
    await this.server.destroy();
  }
}

/** A small valid libvirt domain XML. */
export function domainXml(name: string, o: { uuid?: string; memoryMiB?: number; vcpus?: number; mac?: string } = {}): string {
  return [
    `<domain type='qemu'>`,
    `  <name>${name}</name>`,
    ...(o.uuid ? [`  <uuid>${o.uuid}</uuid>`] : []),
    `  <memory unit='MiB'>${o.memoryMiB ?? 256}</memory>`,
    `  <vcpu>${o.vcpus ?? 1}</vcpu>`,
    `  <os><type arch='x86_64'>hvm</type></os>`,
    `  <devices>`,
    `    <interface type='network'><mac address='${o.mac ?? '52:54:00:00:00:01'}'/><source network='default'/></interface>`,
    `  </devices>`,
    `</domain>`,
    '',
  ].join('\n');
}

/**
 * One rig for the enclosing `describe`: started before its tests (handed to `bind`), destroyed
 * after them; before each test the tree is reset (`pvc cluster init`) and `setup` runs.
 */
export function useRig(bind: (rig: CliRig) => void, setup: (rig: CliRig) => Promise<void> = async () => undefined): void {
  let rig: CliRig | undefined;
  before(async () => {
    rig = await CliRig.start();
    bind(rig);
  });
  after(async () => rig?.destroy());
  beforeEach(async () => {
    await rig!.reset();
    await setup(rig!);
  });
}
