import type { Clock } from '@pvc/runtime';
import { xmlMemoryMiB, xmlUuid } from '../domain-xml.js';
import { VmdError } from '../errors.js';
import type { ObservedDomain } from '../model.js';
import type { Hypervisor } from './hypervisor.js';

/** Options of {@link FakeHypervisor}. */
export interface FakeHypervisorOptions {
  clock: Clock;
  /** Guests react to ACPI shutdown after this many ms; undefined = they ignore it (like the test guest). */
  acpiShutdownMs?: number;
}

/**
 * In-memory libvirt for unit tests. Failure knobs: `failStart` (next N creates fail with
 * `failStartMessage`), `failList`, `failDestroy`, `failShutdown` (next N calls), `down` (every call
 * fails as if libvirtd were unreachable). Counters: `creates` per UUID, `destroys`, `shutdowns`.
 * Validation mirrors what libvirt rejects that vmd cares about: no `<domain>`, no `<uuid>`, a
 * duplicate active UUID.
 */
export class FakeHypervisor implements Hypervisor {
  failStart = 0;
  failStartMessage = 'internal error: process exited while connecting to monitor';
  failList = 0;
  failDestroy = 0;
  failShutdown = 0;
  down = false;
  readonly creates = new Map<string, number>();
  readonly destroys: string[] = [];
  readonly shutdowns: string[] = [];
  private readonly domains = new Map<string, ObservedDomain>();

  constructor(private readonly opts: FakeHypervisorOptions) {}

  /** Puts a running domain in place (as if started by someone else or before a restart). */
  addRunning(uuid: string, name: string, memoryMiB = 128, vcpus = 1): void {
    this.domains.set(uuid, {
      uuid, name, active: true, state: 'running', maxMemKiB: memoryMiB * 1024, memKiB: memoryMiB * 1024, vcpus, cpuTimeNs: 1_000_000,
    });
  }

  /** The guest powers off by itself (or crashes): the transient domain disappears. */
  vanish(uuid: string): void {
    this.domains.delete(uuid);
  }

  isRunning(uuid: string): boolean {
    return this.domains.has(uuid);
  }

  private check(): void {
    if (this.down) throw new VmdError('LIBVIRT_UNAVAILABLE', 'cannot connect to libvirt at fake:///: Connection refused', { retryable: true });
  }

  list(): Promise<ObservedDomain[]> {
    this.check();
    if (this.failList > 0) {
      this.failList--;
      return Promise.reject(new VmdError('LIBVIRT_ERROR', 'fake list failure'));
    }
    return Promise.resolve([...this.domains.values()]);
  }

  createTransient(xml: string): Promise<void> {
    this.check();
    const uuid = xmlUuid(xml);
    const name = /<name>([^<]*)<\/name>/.exec(xml)?.[1];
    if (!xml.includes('<domain') || uuid === undefined || name === undefined) {
      return Promise.reject(new VmdError('LIBVIRT_ERROR', '(domain_definition):1: Premature end of data in tag domain line 1'));
    }
    this.creates.set(uuid, (this.creates.get(uuid) ?? 0) + 1);
    if (this.failStart > 0) {
      this.failStart--;
      return Promise.reject(new VmdError('LIBVIRT_ERROR', this.failStartMessage));
    }
    if (this.domains.has(uuid)) return Promise.reject(new VmdError('LIBVIRT_ERROR', `Requested operation is not valid: domain '${name}' is already active`));
    const vcpus = Number(/<vcpu[^>]*>(\d+)<\/vcpu>/.exec(xml)?.[1] ?? '1');
    this.addRunning(uuid, name, xmlMemoryMiB(xml) ?? 128, vcpus);
    return Promise.resolve();
  }

  shutdown(uuid: string): Promise<void> {
    this.check();
    if (!this.domains.has(uuid)) return Promise.reject(new VmdError('NO_DOMAIN', `Domain not found: no domain with matching uuid '${uuid}'`));
    if (this.failShutdown > 0) {
      this.failShutdown--;
      return Promise.reject(new VmdError('LIBVIRT_ERROR', 'fake shutdown failure'));
    }
    this.shutdowns.push(uuid);
    const delay = this.opts.acpiShutdownMs;
    if (delay !== undefined) void this.opts.clock.sleep(delay).then(() => this.domains.delete(uuid));
    return Promise.resolve();
  }

  destroy(uuid: string): Promise<void> {
    this.check();
    if (this.failDestroy > 0) {
      this.failDestroy--;
      return Promise.reject(new VmdError('LIBVIRT_ERROR', 'fake destroy failure'));
    }
    if (this.domains.delete(uuid)) this.destroys.push(uuid);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
