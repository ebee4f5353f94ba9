import type { Clock } from '@pvc/runtime';
import { domainXmlFacts } from '@pvc/zk';
import { xmlUuid } from '../domain-xml.js';
import { VmdError } from '../errors.js';
import type { LibvirtState, ObservedDomain } from '../model.js';
import type { DomainStats } from '../vm-stats.js';
import type { Hypervisor } from './hypervisor.js';

/** Options of {@link FakeHypervisor}. */
export interface FakeHypervisorOptions {
  clock: Clock;
  /** Guests react to ACPI shutdown after this many ms; undefined = they ignore it (like the test guest). */
  acpiShutdownMs?: number;
  /** Virtual ms a createTransient takes before the domain runs (a TCG createXML: ~300–500); default 0. */
  createLatencyMs?: number;
}

/**
 * In-memory libvirt for unit tests. Failure knobs: `failStart` (next N creates fail with
 * `failStartMessage`, code `failStartCode`: LIBVIRT_ERROR, or LIBVIRT_UNAVAILABLE as when the
 * connection drops mid-call), `failList`, `failStats`, `failDestroy`, `failShutdown` (next N calls), `down`
 * (every call fails as if libvirtd were unreachable). Counters: `creates` per UUID, `destroys`,
 * `shutdowns`, `statsCalls`, `createsInFlight` and its high-water mark `peakCreatesInFlight`, and
 * `createdAt` (virtual time each domain came up). Latency knob: `createLatencyMs` (each create
 * waits that long on the clock, concurrently with the others, before it fails or the domain runs).
 * `setState` pauses (etc.) a domain; `setStats` sets its statistics.
 * Validation mirrors what libvirt rejects that vmd cares about: no `<domain>`, no `<uuid>`, a
 * duplicate active UUID.
 */
export class FakeHypervisor implements Hypervisor {
  failStart = 0;
  failStartMessage = 'internal error: process exited while connecting to monitor';
  failStartCode: 'LIBVIRT_ERROR' | 'LIBVIRT_UNAVAILABLE' = 'LIBVIRT_ERROR';
  failList = 0;
  failStats = 0;
  failDestroy = 0;
  failShutdown = 0;
  down = false;
  readonly creates = new Map<string, number>();
  readonly destroys: string[] = [];
  readonly shutdowns: string[] = [];
  statsCalls = 0;
  createLatencyMs: number;
  createsInFlight = 0;
  peakCreatesInFlight = 0;
  readonly createdAt = new Map<string, number>();
  private readonly domains = new Map<string, ObservedDomain>();
  private readonly extraStats = new Map<string, Partial<DomainStats>>();

  constructor(private readonly opts: FakeHypervisorOptions) {
    this.createLatencyMs = opts.createLatencyMs ?? 0;
  }

  /** Puts a running domain in place (as if started by someone else or before a restart). */
  addRunning(uuid: string, name: string, memoryMiB = 128, vcpus = 1): void {
    this.domains.set(uuid, {
      uuid, name, active: true, state: 'running', maxMemKiB: memoryMiB * 1024, memKiB: memoryMiB * 1024, vcpus, cpuTimeNs: 1_000_000,
    });
  }

  /** The guest powers off by itself (or crashes): the transient domain disappears. */
  vanish(uuid: string): void {
    this.domains.delete(uuid);
    this.extraStats.delete(uuid);
  }

  /** Changes a domain's libvirt state (e.g. `paused`); it stays active. */
  setState(uuid: string, state: LibvirtState): void {
    const d = this.domains.get(uuid);
    if (d) this.domains.set(uuid, { ...d, state });
  }

  /** Statistics reported for a domain on top of the defaults derived from its figures. */
  setStats(uuid: string, stats: Partial<DomainStats>): void {
    this.extraStats.set(uuid, stats);
  }

  isRunning(uuid: string): boolean {
    return this.domains.has(uuid);
  }

  /** The UUIDs of every domain here, sorted (read at once, without the failure knobs). */
  uuids(): string[] {
    return [...this.domains.keys()].sort();
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

  stats(): Promise<DomainStats[]> {
    this.check();
    this.statsCalls++;
    if (this.failStats > 0) {
      this.failStats--;
      return Promise.reject(new VmdError('LIBVIRT_ERROR', 'virsh domstats: fake stats failure'));
    }
    const running = [...this.domains.values()].filter((d) => d.state === 'running');
    return Promise.resolve(running.map((d) => ({ ...defaultStats(d), ...this.extraStats.get(d.uuid) })));
  }

  createTransient(xml: string): Promise<void> {
    this.check();
    if (this.createLatencyMs <= 0) return this.create(xml);
    this.createsInFlight++;
    this.peakCreatesInFlight = Math.max(this.peakCreatesInFlight, this.createsInFlight);
    return this.opts.clock.sleep(this.createLatencyMs).then(() => this.create(xml)).finally(() => this.createsInFlight--);
  }

  private create(xml: string): Promise<void> {
    const uuid = xmlUuid(xml);
    const facts = domainXmlFacts(xml);
    const name = facts.name;
    if (!xml.includes('<domain') || uuid === undefined || name === undefined) {
      return Promise.reject(new VmdError('LIBVIRT_ERROR', '(domain_definition):1: Premature end of data in tag domain line 1'));
    }
    this.creates.set(uuid, (this.creates.get(uuid) ?? 0) + 1);
    if (this.failStart > 0) {
      this.failStart--;
      return Promise.reject(new VmdError(this.failStartCode, this.failStartMessage, { retryable: this.failStartCode === 'LIBVIRT_UNAVAILABLE' }));
    }
    if (this.domains.has(uuid)) return Promise.reject(new VmdError('LIBVIRT_ERROR', `Requested operation is not valid: domain '${name}' is already active`));
    this.addRunning(uuid, name, facts.memoryMiB ?? 128, facts.vcpus ?? 1);
    this.createdAt.set(uuid, this.opts.clock.now());
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

/** What a fake domain reports without {@link FakeHypervisor.setStats}: its figures, no devices. */
function defaultStats(d: ObservedDomain): DomainStats {
  return {
    uuid: d.uuid, state: d.state, maxMemKiB: d.maxMemKiB, memKiB: d.memKiB, vcpus: d.vcpus, cpuTimeNs: d.cpuTimeNs,
    memory: { actual: d.memKiB, rss: d.memKiB },
    cpu: { cpuTimeNs: d.cpuTimeNs, userTimeNs: 0, systemTimeNs: 0 },
    disks: [], nets: [],
  };
}
