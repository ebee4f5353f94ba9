import { AbortedError, describeError, type Clock, type Logger } from '@pvc/runtime';
import { HostNetworkError, type HostNetworkProblem } from './errors.js';
import type { HostInterfacePlan } from './interfaces.js';
import { diffHostInterfaces, type InterfaceChange, type ObservedInterfaces } from './interfaces-diff.js';
import { describeLinkOp, LinkError, type LinkPort } from './link-port.js';

/** A change that was made. */
export interface AppliedChange {
  readonly key: string;
  readonly command: string;
  readonly description: string;
}

/** What {@link applyHostInterfaces} acts through. */
export interface ApplyInterfacesDeps {
  readonly links: LinkPort;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signal?: AbortSignal | undefined;
  /** Bound of the wait for a bridge's carrier before its duplicate address probes (default 5 s). */
  readonly carrierWaitMs?: number | undefined;
}

/** Default bound of the carrier wait: a new bridge takes about a second. */
export const CARRIER_WAIT_MS = 5_000;

/** What {@link applyHostInterfaces} did: no `changes` means the host was already as configured. */
export interface HostInterfacesResult {
  readonly changes: readonly AppliedChange[];
  readonly unchanged: number;
  /** Addresses found on our bridges that the configuration does not name (`ip/prefix on bridge`), left alone. */
  readonly extras: readonly string[];
}

/** A read of the kernel's state failed: terminal like any other host-networking problem. */
function readFailure(err: unknown): Error {
  if (err instanceof AbortedError) return err;
  return new HostNetworkError([{ code: 'HOSTNET_FAILED', key: 'pvc.system.configuration.networking', message: `cannot read the host's interfaces: ${describeError(err)}` }], err);
}

async function observe(port: LinkPort): Promise<ObservedInterfaces> {
  try {
    const [links, addresses, routes] = await Promise.all([port.links(), port.addresses(), port.defaultRoutes()]);
    return { links, addresses, routes };
  } catch (err) {
    throw readFailure(err);
  }
}

function failedChange(c: InterfaceChange, err: unknown): HostNetworkProblem {
  const op = c.op;
  if (err instanceof LinkError && err.reason === 'NO_DEVICE' && op.kind !== 'add-bridge' && op.kind !== 'replace-default-route') {
    // Devices were checked before any change: this one vanished since (or the bridge did, for set-master).
    const missing = op.kind === 'set-master' && err.detail.includes(`"${op.bridge}"`) ? op.bridge : op.device;
    return { code: 'HOSTNET_NO_DEVICE', key: c.key, message: `device "${missing}" does not exist (${err.detail})` };
  }
  if (err instanceof LinkError && err.reason === 'MTU_REFUSED' && op.kind === 'set-mtu') {
    return { code: 'HOSTNET_MTU_REFUSED', key: c.key, message: `device "${op.device}" refused MTU ${op.mtu} (${err.detail})` };
  }
  const detail = err instanceof LinkError ? err.detail : describeError(err);
  return { code: 'HOSTNET_FAILED', key: c.key, message: `${c.description} failed: ${describeLinkOp(op)}: ${detail}` };
}

/** The devices of `names` that have no carrier after waiting (bounded, polling every 100 ms). */
async function withoutCarrier(names: readonly string[], d: ApplyInterfacesDeps): Promise<string[]> {
  const deadline = d.clock.now() + (d.carrierWaitMs ?? CARRIER_WAIT_MS);
  for (;;) {
    const links = await d.links.links().catch((err: unknown) => Promise.reject(readFailure(err)));
    const missing = names.filter((n) => links.find((l) => l.name === n)?.carrier !== true);
    if (missing.length === 0 || d.clock.now() >= deadline) return missing;
    await d.clock.sleep(100, d.signal);
  }
}

async function probe(c: InterfaceChange & { op: { kind: 'add-address' } }, port: LinkPort): Promise<HostNetworkProblem | undefined> {
  const { device, cidr } = c.op;
  const ip = cidr.split('/')[0] ?? cidr;
  try {
    const r = await port.probeAddress(device, ip);
    if (!r.inUse) return undefined;
    const by = r.by === undefined ? '' : ` (${r.by})`;
    return { code: 'HOSTNET_ADDRESS_IN_USE', key: c.key, message: `address ${ip} is already used by another host on ${device}${by}` };
  } catch (err) {
    if (err instanceof AbortedError) throw err;
    return { code: 'HOSTNET_FAILED', key: c.key, message: `cannot check that ${ip} is free on ${device}: ${describeError(err)}` };
  }
}

/**
 * Duplicate address detection of every address about to be added, all at once, once their
 * bridges have carrier (a probe sent before is dropped and would see nobody): any address another
 * host answers for is a problem at its `address` key, and no address is added. A bridge still
 * without carrier after the bound (no port with a link) cannot see other hosts: its addresses are
 * added unchecked, with a warning.
 */
async function checkAddressesFree(changes: readonly InterfaceChange[], d: ApplyInterfacesDeps): Promise<void> {
  const adds = changes.filter((c): c is InterfaceChange & { op: { kind: 'add-address' } } => c.op.kind === 'add-address');
  const dark = new Set(await withoutCarrier([...new Set(adds.map((c) => c.op.device))], d));
  for (const c of adds.filter((a) => dark.has(a.op.device))) {
    d.logger.warn({ key: c.key, device: c.op.device }, `${c.key}: ${c.op.device} has no carrier: ${c.op.cidr} is added without the duplicate address check`);
  }
  const problems = await Promise.all(adds.filter((c) => !dark.has(c.op.device)).map((c) => probe(c, d.links)));
  const found = problems.filter((p): p is HostNetworkProblem => p !== undefined);
  if (found.length > 0) throw new HostNetworkError(found);
}

/**
 * Brings the host's interfaces to the plan, changing only what differs (see
 * {@link diffHostInterfaces}): reads the kernel's state; refuses before any change when a device
 * is missing, something is in the way or the gateway is unreachable; applies the link changes;
 * probes every address it is about to add for a duplicate (once the bridges have carrier); adds
 * the addresses and the route; stops at the first change that fails. Each change is logged once
 * at info with its key and command; the rest only in one summary line. Throws
 * {@link HostNetworkError} naming the config key.
 */
export async function applyHostInterfaces(plan: HostInterfacePlan, d: ApplyInterfacesDeps): Promise<HostInterfacesResult> {
  const { links: port, logger } = d;
  for (const n of plan.notes) logger.warn({ key: n.key }, `${n.key}: ${n.message}`);
  const diff = diffHostInterfaces(plan, await observe(port));
  if (diff.problems.length > 0) throw new HostNetworkError(diff.problems);
  for (const w of diff.warnings) logger.warn({ key: w.key }, `${w.key}: ${w.message}`);
  const extras = diff.extras.map((a) => `${a.ip}/${a.prefix} on ${a.device}`);
  if (extras.length > 0) logger.info({ addresses: extras }, 'addresses on the bridges that the configuration does not name are left alone (floating addresses are netd\'s)');
  const applied: AppliedChange[] = [];
  let probed = false;
  for (const c of diff.changes) {
    if (c.op.kind === 'add-address' && !probed) {
      await checkAddressesFree(diff.changes, d);
      probed = true;
    }
    const command = describeLinkOp(c.op);
    try {
      await port.apply(c.op);
    } catch (err) {
      if (err instanceof AbortedError) throw err;
      throw new HostNetworkError([failedChange(c, err)], err);
    }
    logger.info({ key: c.key, command }, `host interface: ${c.description}`);
    applied.push({ key: c.key, command, description: c.description });
  }
  logger.info({ changes: applied.length, unchanged: diff.unchanged }, `host interfaces: ${applied.length} changes, ${diff.unchanged} already as configured`);
  return { changes: applied, unchanged: diff.unchanged, extras };
}
