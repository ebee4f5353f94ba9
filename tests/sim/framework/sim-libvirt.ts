import { AbortedError, type Clock } from '@pvc/runtime';
import { FakeHypervisor } from '../../../apps/vmd/src/host/fake-hypervisor.js';
import type { Hypervisor } from '../../../apps/vmd/src/host/hypervisor.js';
import type { LiveMigrator } from '../../../apps/vmd/src/host/virsh-migrate.js';
import { xmlUuid } from '../../../apps/vmd/src/domain-xml.js';
import { VmdError } from '../../../apps/vmd/src/errors.js';
import type { DomainStats } from '../../../apps/vmd/src/vm-stats.js';
import type { ObservedDomain } from '../../../apps/vmd/src/model.js';

/** Virtual ms a createXML takes before the domain runs. */
export const CREATE_MS = 500;
/** Virtual ms a guest takes to power off after an ACPI shutdown request. */
export const ACPI_MS = 2_000;
/** Virtual ms the memory copy of a live migration takes. */
export const MIGRATE_MS = 1_000;

/** What a node's libvirt needs from the simulated node. */
export interface SimLibvirtHost {
  readonly name: string;
  clock: Clock;
  /** Powered with network: reachable from the other nodes' libvirtd. */
  reachable(): boolean;
  /** Another node's libvirt, by name. */
  peer(node: string): SimLibvirt | undefined;
  log(text: string): void;
}

/**
 * One node's libvirtd: the vmd fake hypervisor (the hypervisor truth the invariants read) with
 * the node's power around it. A powered-off node's domains vanish and every call fails as if
 * libvirtd were unreachable; a create or migration in flight at that moment never lands. Guests
 * honour ACPI after {@link ACPI_MS}. Every domain that appears or goes is logged (`vm-start`,
 * `vm-stop`) and reported to `onChange`, as libvirt's lifecycle events are to vmd.
 */
export class SimLibvirt implements Hypervisor {
  readonly fake: FakeHypervisor;
  /** libvirt's lifecycle events (vmd's trigger while it runs). */
  onChange: (() => void) | undefined;
  private epoch = new AbortController();

  constructor(private readonly host: SimLibvirtHost) {
    this.fake = new FakeHypervisor({ clock: host.clock });
    this.fake.down = true;
  }

  /** Domains running here now. */
  running(): string[] {
    return this.fake.uuids();
  }

  powerOn(): void {
    this.epoch = new AbortController();
    this.fake.down = false;
  }

  /** The host loses power: every domain is gone at once. */
  powerOff(): void {
    this.epoch.abort(new Error('power off'));
    this.fake.down = true;
    for (const uuid of this.fake.uuids()) this.gone(uuid, 'power off');
  }

  list(): Promise<ObservedDomain[]> {
    return this.fake.list();
  }

  stats(): Promise<DomainStats[]> {
    return this.fake.stats();
  }

  async createTransient(xml: string): Promise<void> {
    await this.during(CREATE_MS, 'the host lost power during createXML');
    await this.fake.createTransient(xml);
    this.came(xmlUuid(xml) ?? '?', 'created');
  }

  async shutdown(uuid: string): Promise<void> {
    await this.fake.shutdown(uuid);
    const epoch = this.epoch.signal;
    void this.host.clock.sleep(ACPI_MS, epoch).then(() => {
      if (this.fake.isRunning(uuid)) this.gone(uuid, 'guest powered off');
    }, () => undefined);
  }

  async destroy(uuid: string): Promise<void> {
    const was = this.fake.isRunning(uuid);
    await this.fake.destroy(uuid);
    if (was) this.log('vm-stop', uuid, 'destroyed');
    if (was) this.onChange?.();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Live migration from this node to another over the simulated network. */
  migrator(): LiveMigrator {
    return {
      setMaxDowntime: () => (this.host.reachable() ? Promise.resolve() : Promise.reject(failed('cannot connect to the local libvirtd'))),
      migrateLive: async (uuid, peer) => {
        const target = peer.migrateUri.replace(/^tcp:\/\//, '');
        const to = this.host.peer(target);
        const reach = (): boolean => this.host.reachable() && to !== undefined && to.host.reachable();
        if (!reach()) throw failed(`unable to connect to server at '${target}:16509': No route to host`);
        await this.during(MIGRATE_MS, 'the host lost power during the migration').catch((err: unknown) => {
          throw failed(err instanceof Error ? err.message : String(err));
        });
        const dom = (await this.fake.list()).find((d) => d.uuid === uuid);
        if (!dom) throw failed(`Domain not found: no domain with matching uuid '${uuid}'`);
        if (!reach() || !to) throw failed(`operation failed: migration to ${target} lost its connection`);
        this.fake.vanish(uuid);
        this.gone(uuid, `migrated to ${target}`);
        to.fake.addRunning(uuid, dom.name, dom.maxMemKiB / 1024, dom.vcpus);
        to.came(uuid, `migrated from ${this.host.name}`);
      },
      abortJob: () => Promise.resolve(),
    };
  }

  /** Waits `ms` unless the host loses power meanwhile (then libvirtd is gone: LIBVIRT_UNAVAILABLE). */
  private async during(ms: number, what: string): Promise<void> {
    try {
      await this.host.clock.sleep(ms, this.epoch.signal);
    } catch (err) {
      if (err instanceof AbortedError || this.epoch.signal.aborted) throw new VmdError('LIBVIRT_UNAVAILABLE', what, { retryable: true });
      throw err;
    }
  }

  private came(uuid: string, why: string): void {
    this.log('vm-start', uuid, why);
    this.onChange?.();
  }

  private gone(uuid: string, why: string): void {
    this.fake.vanish(uuid);
    this.log('vm-stop', uuid, why);
    this.onChange?.();
  }

  private log(what: 'vm-start' | 'vm-stop', uuid: string, why: string): void {
    this.host.log(`${what} ${uuid} (${why})`);
  }
}

function failed(msg: string): VmdError {
  return new VmdError('MIGRATION_FAILED', `virsh migrate: ${msg}`);
}
