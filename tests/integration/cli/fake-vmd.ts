/**
 * A fake of vmd + keepaliled for the CLI tests: watches every VM's `state` over a real ZK client
 * and reacts the way the node daemons do (docs/vmd.md, inventory §5.2), so that `--wait` paths
 * can be driven to success, failure and timeout:
 * - start → the UUID appears in its node's `runningdomains` (keepaliled), failedreason cleared;
 *   with `failStart` → `state fail` + `failedreason`;
 * - stop → removed from every `runningdomains`, then `stop` written (vmd after a destroy);
 * - shutdown → likewise (ACPI shutdown done);
 * - restart → removed, `start` written (then started as above);
 * - migrate / migrate-live → entry moved from the source to `node`, `start` written; with
 *   `abortMigration` → `start`, `node` back to the source, failedreason "Migration to X failed: …".
 * VMs in `ignore` (or everything while `paused`) get no reaction. The real counterpart is vmd,
 * exercised by the cluster tests.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { codec, paths, type ZkClient } from '@pvc/zk';

/** A running fake. */
export class FakeVmd {
  /** UUIDs whose start fails. */
  readonly failStart = new Set<string>();
  /** UUIDs whose migrations abort. */
  readonly abortMigration = new Set<string>();
  /** UUIDs that get no reaction at all. */
  readonly ignore = new Set<string>();
  /** No reaction to anything while true. */
  paused = false;
  /** Delay before each reaction, ms (so that --wait shows progress). */
  delayMs = 50;
  /** Every state the fake reacted to, as `<uuid> <state>`. */
  readonly seen: string[] = [];
  private readonly watches = new Map<string, () => void>();
  private stopChildren: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly zk: ZkClient) {}

  /** Starts watching `/domains`. */
  start(): void {
    this.stopChildren = this.zk.watchChildren(paths.domains, (uuids) => {
      for (const uuid of uuids ?? []) {
        if (!this.watches.has(uuid)) this.watches.set(uuid, this.zk.watchData(paths.domain(uuid).state, (snap) => this.queue(uuid, snap?.data)));
      }
      for (const [uuid, stop] of this.watches) {
        if (!(uuids ?? []).includes(uuid)) {
          stop();
          this.watches.delete(uuid);
        }
      }
    });
  }

  /** Stops every watch and waits for reactions in progress. */
  async stop(): Promise<void> {
    this.stopChildren?.();
    for (const stop of this.watches.values()) stop();
    this.watches.clear();
    await this.chain;
  }

  private queue(uuid: string, state: string | undefined): void {
    if (state === undefined) return;
    this.chain = this.chain.then(() => this.react(uuid, state)).catch(() => undefined);
  }

  private async react(uuid: string, state: string): Promise<void> {
    if (this.paused || this.ignore.has(uuid)) return;
    await sleep(this.delayMs);
    const d = paths.domain(uuid);
    if ((await this.zk.read(d.state)) !== state) return;
    this.seen.push(`${uuid} ${state}`);
    const node = (await this.zk.read(d.node)) ?? '';
    const runningOn = await this.runningOn(uuid);
    switch (state) {
      case 'start':
        if (this.failStart.has(uuid)) return this.zk.write([[d.state, 'fail'], [d.failedReason, 'fake vmd: libvirt error: cannot start']]);
        if (runningOn.includes(node) && runningOn.length === 1) return;
        await this.setRunning(uuid, node);
        return this.zk.write([[d.failedReason, '']]);
      case 'stop':
      case 'shutdown':
        if (runningOn.length === 0 && state === 'stop') return;
        await this.setRunning(uuid, undefined);
        return this.zk.write([[d.state, 'stop']]);
      case 'restart':
        await this.setRunning(uuid, undefined);
        return this.zk.write([[d.state, 'start']]);
      case 'migrate':
      case 'migrate-live':
        return this.migrate(uuid, node, runningOn[0]);
      default:
        return;
    }
  }

  private async migrate(uuid: string, target: string, source: string | undefined): Promise<void> {
    const d = paths.domain(uuid);
    if (this.abortMigration.has(uuid) && source !== undefined) {
      const last = (await this.zk.read(d.lastNode)) === source ? '' : ((await this.zk.read(d.lastNode)) ?? '');
      return this.zk.write([[d.state, 'start'], [d.node, source], [d.lastNode, last], [d.failedReason, `Migration to ${target} failed: fake vmd: peer refused`]]);
    }
    await this.setRunning(uuid, target);
    await this.zk.write([[d.state, 'start'], [d.failedReason, '']]);
  }

  /** Nodes whose runningdomains list the UUID. */
  async runningOn(uuid: string): Promise<string[]> {
    const out: string[] = [];
    for (const n of await this.zk.children(paths.nodes)) {
      if (codec.runningDomains.decode((await this.zk.read(paths.node(n).runningDomains)) ?? '', '').includes(uuid)) out.push(n);
    }
    return out.sort();
  }

  /** Lists the UUID on `node` only (or on none). */
  async setRunning(uuid: string, node: string | undefined): Promise<void> {
    for (const n of await this.zk.children(paths.nodes)) {
      const key = paths.node(n).runningDomains;
      const list = codec.runningDomains.decode((await this.zk.read(key)) ?? '', key).filter((u) => u !== uuid);
      if (n === node) list.push(uuid);
      await this.zk.write([[key, codec.runningDomains.encode(list)]]);
    }
  }
}
