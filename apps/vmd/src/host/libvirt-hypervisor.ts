import { ConnectListAllDomainsFlags, Hypervisor as Libvirt, type Domain } from '@unraid/libvirt';
import { describeError, type Clock, type Exec, type Logger } from '@pvc/runtime';
import { liveDevices } from '../domain-xml.js';
import { VmdError } from '../errors.js';
import { LIBVIRT_STATE_NAMES, type ObservedDomain } from '../model.js';
import type { DomainStats } from '../vm-stats.js';
import { domainStatsFrom, readDomstats } from './domstats.js';
import { isActiveState, type Hypervisor } from './hypervisor.js';

/** Options of {@link createLibvirtHypervisor}. */
export interface LibvirtHypervisorOptions {
  /** `system.configuration.hypervisor.libvirt_uri`. */
  uri: string;
  clock: Clock;
  logger: Logger;
  /** Runs `virsh domstats` (statistics; the binding has no bulk-stats call). */
  exec: Exec;
  /** Deadline of one call (createXML of a large guest can be slow); default 60 000 ms. */
  callTimeoutMs?: number;
  /** Deadline of `virsh domstats`; default 10 000 ms (it runs every keepalive interval). */
  statsTimeoutMs?: number;
}

/** libvirt messages that mean the connection (not the request) failed: reconnect next time. */
const CONNECTION_LOST =
  /client socket is closed|Cannot recv data|Cannot write data|End of file while reading|Failed to connect|not connected|Broken pipe|unable to connect|Connection reset|no valid connection/i;

/**
 * The libvirt port over `@unraid/libvirt` (N-API; each call runs on libuv's thread pool, so the
 * event loop never blocks). Everything vmd needs is in the binding: createXML, shutdown, destroy,
 * list + info, live XML. (virsh is kept for what the binding lacks: statistics here, the event
 * stream and migration elsewhere.) The
 * connection is opened lazily and dropped on a connection-level error, so a restarted libvirtd is
 * picked up by the next call; running guests are unaffected (they belong to libvirtd).
 */
export function createLibvirtHypervisor(opts: LibvirtHypervisorOptions): Hypervisor {
  const timeoutMs = opts.callTimeoutMs ?? 60_000;
  let conn: Libvirt | undefined;

  const reset = async (): Promise<void> => {
    const old = conn;
    conn = undefined;
    if (old) await old.connectClose().catch(() => undefined);
  };
  const connection = async (): Promise<Libvirt> => {
    if (conn) return conn;
    const c = new Libvirt({ uri: opts.uri });
    try {
      await c.connectOpen();
    } catch (err) {
      throw new VmdError('LIBVIRT_UNAVAILABLE', `cannot connect to libvirt at ${opts.uri}: ${describeError(err)}`, { cause: err, retryable: true });
    }
    opts.logger.info({ uri: opts.uri }, 'connected to libvirt');
    conn = c;
    return c;
  };
  /** Runs one libvirt call with a deadline and maps its errors onto VmdError codes. */
  const call = async <T>(what: string, fn: (c: Libvirt) => Promise<T>): Promise<T> => {
    const c = await connection();
    const ac = new AbortController();
    const timer = opts.clock.sleep(timeoutMs, ac.signal).then(() => {
      throw new VmdError('LIBVIRT_TIMEOUT', `libvirt ${what} did not answer within ${timeoutMs} ms`, { retryable: true });
    }, () => undefined as never);
    try {
      return await Promise.race([fn(c), timer]);
    } catch (err) {
      throw await mapError(what, err);
    } finally {
      ac.abort();
    }
  };
  const mapError = async (what: string, err: unknown): Promise<VmdError> => {
    if (err instanceof VmdError) {
      if (err.code === 'LIBVIRT_TIMEOUT') await reset();
      return err;
    }
    const msg = describeError(err);
    if (/Domain not found/i.test(msg)) return new VmdError('NO_DOMAIN', msg, { cause: err });
    if (CONNECTION_LOST.test(msg)) {
      await reset();
      return new VmdError('LIBVIRT_UNAVAILABLE', `libvirt connection lost during ${what}: ${msg}`, { cause: err, retryable: true });
    }
    return new VmdError('LIBVIRT_ERROR', msg, { cause: err });
  };
  const lookup = (c: Libvirt, uuid: string): Promise<Domain> => c.domainLookupByUUIDString(uuid);

  return {
    list: () => call('list', async (c) => {
      const doms = await c.connectListAllDomains(ConnectListAllDomainsFlags.ACTIVE);
      const out: ObservedDomain[] = [];
      for (const d of doms) {
        const seen = await describeDomain(d);
        if (seen) out.push(seen);
      }
      return out;
    }),
    stats: async () => {
      const out: DomainStats[] = [];
      for (const rec of await readDomstats(opts.exec, opts.uri, opts.statsTimeoutMs ?? 10_000)) {
        const seen = await call('stats', (c) => identify(c, rec.name));
        if (seen) out.push(domainStatsFrom(rec, seen.info, liveDevices(seen.xml)));
      }
      return out;
    },
    createTransient: (xml) => call('create', async (c) => void (await c.domainCreateXML(xml))),
    shutdown: (uuid) => call('shutdown', async (c) => (await lookup(c, uuid)).shutdown()),
    destroy: async (uuid) => {
      try {
        await call('destroy', async (c) => (await lookup(c, uuid)).destroy());
      } catch (err) {
        if (err instanceof VmdError && err.code === 'NO_DOMAIN') return;
        throw err;
      }
    },
    close: reset,
  };
}

/** A domain's figures, or undefined when it vanished while being listed. */
async function describeDomain(d: Domain): Promise<ObservedDomain | undefined> {
  try {
    const [uuid, name, info] = await Promise.all([d.getUUIDString(), d.getName(), d.getInfo()]);
    const state = LIBVIRT_STATE_NAMES[info.state] ?? 'nostate';
    return {
      uuid, name, state, active: isActiveState(state),
      maxMemKiB: info.maxMem, memKiB: info.memory, vcpus: info.nrVirtCpu, cpuTimeNs: info.cpuTime,
    };
  } catch (err) {
    if (/Domain not found/i.test(describeError(err))) return undefined;
    throw err;
  }
}

/**
 * The info and live XML of the domain named `name` (domstats names domains by name), or undefined
 * when it stopped meanwhile. The live XML has what the stored one lacks: the tap devices.
 */
async function identify(c: Libvirt, name: string): Promise<{ info: ObservedDomain; xml: string } | undefined> {
  try {
    const d = await c.domainLookupByName(name);
    const [info, xml] = await Promise.all([describeDomain(d), d.getXMLDesc()]);
    return info && { info, xml };
  } catch (err) {
    if (/Domain not found/i.test(describeError(err))) return undefined;
    throw err;
  }
}
