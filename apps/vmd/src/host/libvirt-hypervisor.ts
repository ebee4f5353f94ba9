import { ConnectListAllDomainsFlags, Hypervisor as Libvirt, type Domain } from '@unraid/libvirt';
import { tmpdir } from 'node:os';
import { describeError, mapLimit, type Clock, type Exec, type Logger } from '@pvc/runtime';
import { liveDevices } from '../domain-xml.js';
import { VmdError } from '../errors.js';
import { LIBVIRT_STATE_NAMES, type ObservedDomain } from '../model.js';
import type { DomainStats } from '../vm-stats.js';
import { domainStatsFrom, readDomstats } from './domstats.js';
import { isActiveState, type Hypervisor } from './hypervisor.js';
import { virshCreate } from './virsh-create.js';

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
  /** Where `virsh create` reads a domain's XML from (root-only; default the OS temp dir). */
  scratchDir?: string;
}

/**
 * Creates run through the binding while fewer than this many are in progress, through virsh
 * beyond ({@link virshCreate}): a lone start stays as fast as before (no process to spawn, ~20 ms),
 * and a burst leaves at least 2 of libuv's default 4 pool threads to the other calls.
 */
const BINDING_CREATES = 2;

/** Domains `list` describes at once (3 binding calls each). */
const DESCRIBE_CONCURRENCY = 8;

/** libvirt messages that mean the connection (not the request) failed: reconnect next time. */
const CONNECTION_LOST =
  /client socket is closed|Cannot recv data|Cannot write data|End of file while reading|Failed to connect|not connected|Broken pipe|unable to connect|Connection reset|no valid connection/i;

/**
 * The libvirt port over `@unraid/libvirt` (N-API; each call runs on libuv's thread pool, so the
 * event loop never blocks): createXML, shutdown, destroy, list + info, live XML. virsh is used for
 * what the binding lacks or does badly: statistics, and the creates of a burst beyond
 * {@link BINDING_CREATES} ({@link virshCreate}: a binding call holds a pool thread for its whole
 * length, and with the pool's default 4 threads a burst of starts ran 4 at a time and held up
 * every other call); the event stream and migration elsewhere. The
 * connection is opened lazily and dropped on a connection-level error, so a restarted libvirtd is
 * picked up by the next call; running guests are unaffected (they belong to libvirtd).
 */
export function createLibvirtHypervisor(opts: LibvirtHypervisorOptions): Hypervisor {
  const timeoutMs = opts.callTimeoutMs ?? 60_000;
  const main = lazyConnection(opts);
  const scratchDir = opts.scratchDir ?? tmpdir();
  let bindingCreates = 0;

  /** Runs one libvirt call with a deadline and maps its errors onto VmdError codes. */
  const call = async <T>(what: string, fn: (c: Libvirt) => Promise<T>): Promise<T> => {
    const ac = new AbortController();
    const timer = opts.clock.sleep(timeoutMs, ac.signal).then(() => {
      throw new VmdError('LIBVIRT_TIMEOUT', `libvirt ${what} did not answer within ${timeoutMs} ms`, { retryable: true });
    }, () => undefined as never);
    try {
      return await Promise.race([main.use(fn), timer]);
    } catch (err) {
      throw await mapError(what, err, main);
    } finally {
      ac.abort();
    }
  };
  const mapError = async (what: string, err: unknown, conn: LazyConnection): Promise<VmdError> => {
    if (err instanceof VmdError) {
      if (err.code === 'LIBVIRT_TIMEOUT') await conn.reset(err.message);
      return err;
    }
    const msg = describeError(err);
    if (/Domain not found/i.test(msg)) return new VmdError('NO_DOMAIN', msg, { cause: err });
    if (CONNECTION_LOST.test(msg)) {
      await conn.reset(`${what}: ${msg}`);
      return new VmdError('LIBVIRT_UNAVAILABLE', `libvirt connection lost during ${what}: ${msg}`, { cause: err, retryable: true });
    }
    return new VmdError('LIBVIRT_ERROR', msg, { cause: err });
  };
  const lookup = (c: Libvirt, uuid: string): Promise<Domain> => c.domainLookupByUUIDString(uuid);
  const pin = pinner();
  const describe = (d: Domain): Promise<ObservedDomain | undefined> => pin(d, describeDomain);

  return {
    // Domains described several at a time: each binding call is a pool job, and one domain after
    // another they queued behind the creates in progress once per domain (a pass's list of 10
    // domains took up to 1.5 s during a burst of starts).
    list: () => call('list', async (c) => {
      const doms = await c.connectListAllDomains(ConnectListAllDomainsFlags.ACTIVE);
      const seen = await mapLimit(doms, DESCRIBE_CONCURRENCY, describe);
      return seen.filter((d): d is ObservedDomain => d !== undefined);
    }),
    stats: async () => {
      const out: DomainStats[] = [];
      for (const rec of await readDomstats(opts.exec, opts.uri, opts.statsTimeoutMs ?? 10_000)) {
        const seen = await call('stats', (c) => identify(c, rec.name, pin));
        if (seen) out.push(domainStatsFrom(rec, seen.info, liveDevices(seen.xml)));
      }
      return out;
    },
    createTransient: async (xml) => {
      if (bindingCreates >= BINDING_CREATES) return virshCreate(xml, { exec: opts.exec, uri: opts.uri, scratchDir, timeoutMs });
      bindingCreates++;
      try {
        await call('create', async (c) => void (await c.domainCreateXML(xml)));
      } finally {
        bindingCreates--;
      }
    },
    shutdown: (uuid) => call('shutdown', async (c) => pin(await lookup(c, uuid), (d) => d.shutdown())),
    destroy: async (uuid) => {
      try {
        await call('destroy', async (c) => pin(await lookup(c, uuid), (d) => d.destroy()));
      } catch (err) {
        if (err instanceof VmdError && err.code === 'NO_DOMAIN') return;
        throw err;
      }
    },
    close: () => main.reset(),
  };
}

/**
 * One libvirt connection, opened on first use and dropped (`reset`) after a connection-level
 * error. A dropped connection is closed only once no call uses it any more: virConnectClose under
 * a call still running on another thread would free the connection beneath it.
 */
interface LazyConnection {
  /** Runs `fn` on the connection (opened first if needed). */
  use<T>(fn: (c: Libvirt) => Promise<T>): Promise<T>;
  /** Drops the connection (the next call opens a new one); `why` is logged. */
  reset(why?: string): Promise<void>;
}

/** Objects in use, counted: one held twice stays held until released twice. */
class InUse<K extends object> {
  private readonly counts = new Map<K, number>();

  has(k: K): boolean {
    return this.counts.has(k);
  }

  /** Runs `fn` with `k` counted as in use (and so reachable from here) until it settles. */
  async during<T>(k: K, fn: () => Promise<T>): Promise<T> {
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (this.counts.get(k) ?? 1) - 1;
      if (n > 0) this.counts.set(k, n);
      else this.counts.delete(k);
    }
  }
}

function lazyConnection(opts: LibvirtHypervisorOptions): LazyConnection {
  let conn: Libvirt | undefined;
  const users = new InUse<Libvirt>();
  const dropped = new Set<Libvirt>();
  const closeIfUnused = async (c: Libvirt): Promise<void> => {
    if (!dropped.has(c) || users.has(c)) return;
    dropped.delete(c);
    await c.connectClose().catch(() => undefined);
  };
  const open = async (): Promise<Libvirt> => {
    if (conn) return conn;
    const c = new Libvirt({ uri: opts.uri });
    try {
      await c.connectOpen();
    } catch (err) {
      throw new VmdError('LIBVIRT_UNAVAILABLE', `cannot connect to libvirt at ${opts.uri}: ${describeError(err)}`, { cause: err, retryable: true });
    }
    // Calls racing to open keep the first connection; the others are closed, not leaked.
    if (conn) {
      await c.connectClose().catch(() => undefined);
      return conn;
    }
    opts.logger.info({ uri: opts.uri }, 'connected to libvirt');
    conn = c;
    return c;
  };
  return {
    use: async (fn) => {
      const c = await open();
      try {
        return await users.during(c, () => fn(c));
      } finally {
        await closeIfUnused(c);
      }
    },
    reset: async (why) => {
      const old = conn;
      conn = undefined;
      if (!old) return;
      if (why !== undefined) opts.logger.warn({ uri: opts.uri, why }, 'libvirt connection dropped; the next call reconnects');
      dropped.add(old);
      await closeIfUnused(old);
    },
  };
}

/**
 * Keeps a binding object reachable while `fn` uses it. @unraid/libvirt's workers hold only the
 * raw virDomainPtr of a Domain, not the JS object: a Domain nothing refers to any more — as in
 * `(await lookup()).destroy()` — can be collected while its call waits in libuv's pool, and its
 * finalizer (virDomainFree) then frees the pointer the call is about to use. That crashed vmd
 * (SIGSEGV in virDomainDestroy) when the pass destroyed VMs right after a burst of starts.
 */
function pinner(): <O extends object, T>(o: O, fn: (o: O) => Promise<T>) => Promise<T> {
  const held = new InUse<object>();
  return (o, fn) => held.during(o, () => fn(o));
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
async function identify(c: Libvirt, name: string, pin: ReturnType<typeof pinner>): Promise<{ info: ObservedDomain; xml: string } | undefined> {
  try {
    const [info, xml] = await pin(await c.domainLookupByName(name), (d) => Promise.all([describeDomain(d), d.getXMLDesc()]));
    return info && { info, xml };
  } catch (err) {
    if (/Domain not found/i.test(describeError(err))) return undefined;
    throw err;
  }
}
