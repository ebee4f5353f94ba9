import { join } from 'node:path';
import { describeError, type Clock, type Logger } from '@pvc/runtime';
import { domainKeys, pair, type KeySpec, type ZkClient } from '@pvc/zk';
import type { DesiredVm, ObservedDomain } from '../model.js';
import type { ConsoleFiles } from './files.js';
import { ConsoleFollower } from './follower.js';
import { consoleLogPath, vncAddress, type LiveXmlReader } from './live-xml.js';

/** Ports and settings of {@link ConsoleWatcher}. */
export interface ConsoleWatcherDeps {
  zk: ZkClient;
  clock: Clock;
  logger: Logger;
  files: ConsoleFiles;
  liveXml: LiveXmlReader;
  /** This node's name. */
  node: string;
  /** `console_log_lines`. */
  lines: number;
  /** `console_log_directory`: `<dir>/<vm name>.log` when the live XML names no log file. */
  consoleDir: string;
  /** How often each file is checked, ms (default 500, the original's period). */
  pollMs?: number;
}

interface Watched {
  readonly ac: AbortController;
  readonly done: Promise<void>;
}

/**
 * Console logs and VNC of the VMs running here. {@link sync} is called after every reconciler
 * pass with what ZK wants and what libvirt runs: each VM active here and assigned to this node gets
 * a follower — its live XML is read once (a new run = a new follower), `vnc` is written from it,
 * then its console log is polled every `pollMs` and the last `console_log_lines` lines go to
 * `consolelog` when they changed. A VM that stops (or is assigned elsewhere) is polled one last
 * time and dropped; `vnc` is then cleared if the VM is still assigned here.
 */
export class ConsoleWatcher {
  private readonly vms = new Map<string, Watched>();

  constructor(private readonly deps: ConsoleWatcherDeps) {}

  /** UUIDs followed now (tests). */
  followed(): string[] {
    return [...this.vms.keys()].sort();
  }

  /** Starts/stops followers so that exactly the VMs running here and assigned here are followed. */
  sync(desired: ReadonlyMap<string, DesiredVm>, observed: ReadonlyMap<string, ObservedDomain>): void {
    const want = new Map<string, string>();
    for (const d of observed.values()) {
      const vm = desired.get(d.uuid);
      if (d.active && vm?.node === this.deps.node) want.set(d.uuid, vm.name ?? d.name);
    }
    for (const [uuid, w] of [...this.vms]) {
      if (want.has(uuid)) continue;
      this.vms.delete(uuid);
      w.ac.abort();
      const stillHere = desired.get(uuid)?.node === this.deps.node;
      if (stillHere) void w.done.then(() => this.writeKey(domainKeys(uuid).vnc, ''));
    }
    for (const [uuid, name] of want) {
      if (this.vms.has(uuid)) continue;
      const ac = new AbortController();
      this.vms.set(uuid, { ac, done: this.follow(uuid, name, ac.signal) });
    }
  }

  /** Stops every follower (vmd is stopping); keys are left as they are. */
  async stop(): Promise<void> {
    const all = [...this.vms.values()];
    this.vms.clear();
    for (const w of all) w.ac.abort();
    await Promise.all(all.map((w) => w.done));
  }

  private async follow(uuid: string, name: string, signal: AbortSignal): Promise<void> {
    const log = this.deps.logger.child({ vm: name, uuid });
    let xml: string | undefined;
    try {
      xml = await this.deps.liveXml(uuid);
    } catch (err) {
      log.warn({ err: describeError(err) }, 'cannot read the live domain XML: vnc left empty, console log at the default path');
    }
    if (signal.aborted) return;
    await this.writeKey(domainKeys(uuid).vnc, xml === undefined ? '' : vncAddress(xml));
    const path = (xml && consoleLogPath(xml)) ?? join(this.deps.consoleDir, `${name}.log`);
    log.info({ path }, 'following the console log');
    const follower = new ConsoleFollower({
      files: this.deps.files, path, lines: this.deps.lines, logger: log,
      write: async (text) => this.writeKey(domainKeys(uuid).consoleLog, text),
    });
    for (;;) {
      await follower.poll();
      if (signal.aborted) break;
      await this.deps.clock.sleep(this.deps.pollMs ?? 500, signal).catch(() => undefined);
    }
  }

  /** One key write; false when ZK is not connected or the write failed (logged at debug). */
  private async writeKey(key: KeySpec<string>, value: string): Promise<boolean> {
    if (this.deps.zk.state !== 'connected') return false;
    try {
      await this.deps.zk.write([pair(key, value)]);
      return true;
    } catch (err) {
      this.deps.logger.debug({ key: key.path, err: describeError(err) }, 'console/vnc key write failed');
      return false;
    }
  }
}
