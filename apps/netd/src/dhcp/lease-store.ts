/**
 * DHCP leases in Zookeeper, as the original's lease hook keeps them (pvc-inventory §1.4, §7.2):
 * `/networks/<vni>/dhcp4_leases/<mac>` with root data `""` and the children `expiry` (what dnsmasq
 * gives: the expiry time in epoch seconds), `ipaddr`, `hostname` (`""` if none) and `clientid`
 * (`*` if none).
 *
 * - A store deletes the lease's whole subtree and recreates it in ONE transaction, so a reader never
 *   sees a half-written lease. A concurrent change to the subtree aborts the transaction; it is
 *   read again and retried a bounded number of times.
 * - The leases parent (`dhcp4_leases`) is never created here: it belongs to the network object,
 *   and a network being removed must not be resurrected by a late lease.
 * - A delete is recursive; an absent lease counts as deleted.
 *
 * The lease keys are defined here because `@pvc/zk` (keys.ts) has no key table for them yet.
 */
import { codec, isZkError, paths, readKeys, type KeySpec, type ZkClient, type ZkOp } from '@pvc/zk';
import { describeError } from '@pvc/runtime';
import { DhcpError } from './errors.js';

/** One lease as stored. */
export interface Lease {
  readonly mac: string;
  /** Epoch seconds as dnsmasq gives them (text, stored as is). */
  readonly expiry: string;
  readonly ipaddr: string;
  /** `""` when the client sent none. */
  readonly hostname: string;
  /** `*` when the client sent none. */
  readonly clientid: string;
}

const textKey = (path: string): KeySpec<string, string> => ({ path, codec: codec.text, fallback: '', fill: '' });

/** The keys of `/networks/<vni>/dhcp4_leases/<mac>` (text values). */
export function leaseKeys(vni: string, mac: string) {
  const p = paths.network(vni).lease(mac);
  return {
    root: textKey(p.root),
    expiry: textKey(p.expiry),
    ipaddr: textKey(p.ipaddr),
    hostname: textKey(p.hostname),
    clientid: textKey(p.clientId),
  } as const;
}

/** Paths of every node under `root` (not `root` itself), deepest first. */
async function subtree(zk: ZkClient, root: string): Promise<string[]> {
  const out: string[] = [];
  for (const child of await zk.children(root)) {
    const path = `${root}/${child}`;
    out.push(...(await subtree(zk, path)), path);
  }
  return out;
}

/** How often a store is retried when a concurrent change aborts its transaction. */
export const STORE_ATTEMPTS = 3;

/**
 * Writes `lease`: delete the subtree (if any) and recreate root + 4 children, in one transaction.
 * Throws the ZK error (with the lease root in its message) when the parent is missing or the
 * transaction keeps failing.
 */
export async function storeLease(zk: ZkClient, vni: string, lease: Lease): Promise<void> {
  const k = leaseKeys(vni, lease.mac);
  for (let attempt = 1; ; attempt++) {
    const existing = (await zk.exists(k.root.path)) ? [...(await subtree(zk, k.root.path)), k.root.path] : [];
    const ops: ZkOp[] = [
      ...existing.map((path): ZkOp => ({ type: 'delete', path })),
      { type: 'create', path: k.root.path, data: '' },
      { type: 'create', path: k.expiry.path, data: lease.expiry },
      { type: 'create', path: k.ipaddr.path, data: lease.ipaddr },
      { type: 'create', path: k.hostname.path, data: lease.hostname },
      { type: 'create', path: k.clientid.path, data: lease.clientid },
    ];
    try {
      await zk.multi(ops);
      return;
    } catch (err) {
      // NO_NODE also means the leases parent is missing: re-reading tells the two apart.
      const parentMissing = !(await zk.exists(paths.network(vni).leases));
      if (parentMissing || attempt >= STORE_ATTEMPTS || !isZkError(err, 'NO_NODE', 'NODE_EXISTS', 'NOT_EMPTY', 'BAD_VERSION')) {
        const why = parentMissing ? `${paths.network(vni).leases} does not exist` : describeError(err);
        throw new DhcpError('LEASE_STORE_FAILED', vni, `${k.root.path}: lease not stored: ${why}`, err);
      }
    }
  }
}

/** Deletes the lease of `mac` with its subtree; an absent lease counts as deleted. */
export async function deleteLease(zk: ZkClient, vni: string, mac: string): Promise<void> {
  const root = leaseKeys(vni, mac).root.path;
  try {
    await zk.delete(root, { recursive: true, missingOk: true });
  } catch (err) {
    throw new DhcpError('LEASE_STORE_FAILED', vni, `${root}: lease not deleted: ${describeError(err)}`, err);
  }
}

/** The stored lease of `mac`, or undefined when there is none. */
export async function readLease(zk: ZkClient, vni: string, mac: string): Promise<Lease | undefined> {
  const k = leaseKeys(vni, mac);
  if (!(await zk.exists(k.root.path))) return undefined;
  const [expiry, ipaddr, hostname, clientid] = await readKeys(zk, [k.expiry, k.ipaddr, k.hostname, k.clientid]);
  return { mac, expiry, ipaddr, hostname, clientid };
}

/** Every stored lease of network `vni` (none when the leases parent is absent). */
export async function listLeases(zk: ZkClient, vni: string): Promise<Lease[]> {
  const parent = paths.network(vni).leases;
  let macs: string[];
  try {
    macs = await zk.children(parent);
  } catch (err) {
    if (isZkError(err, 'NO_NODE')) return [];
    throw err;
  }
  const leases = await Promise.all(macs.map((mac) => readLease(zk, vni, mac)));
  return leases.filter((l): l is Lease => l !== undefined);
}

/** What `init` hands dnsmasq: the lease-file text, and each stored lease left out with why. */
export interface InitLeases {
  readonly text: string;
  readonly count: number;
  /** Each stored lease that would corrupt dnsmasq's parse: its root key and why. */
  readonly leftOut: readonly { readonly key: string; readonly problem: string }[];
}

/** Every stored lease of `vni` in dnsmasq's lease-file format ({@link initLine}). */
export async function initLeases(zk: ZkClient, vni: string): Promise<InitLeases> {
  const lines: string[] = [];
  const leftOut: { key: string; problem: string }[] = [];
  for (const lease of await listLeases(zk, vni)) {
    const r = initLine(lease);
    if ('line' in r) lines.push(r.line);
    else leftOut.push({ key: paths.network(vni).lease(lease.mac).root, problem: r.problem });
  }
  return { text: lines.map((l) => `${l}\n`).join(''), count: lines.length, leftOut };
}

/**
 * One line of dnsmasq's lease-file format (`<expiry> <mac> <ip> <hostname> <clientid>`), as `init`
 * prints it; `undefined` (with the reason) when the stored lease would corrupt dnsmasq's parse.
 * An empty hostname or client id is printed as `*`, dnsmasq's own "none": the original printed an
 * empty field, which shifts the next fields when dnsmasq reads them **[bug?]**.
 */
export function initLine(l: Lease): { line: string } | { problem: string } {
  if (!/^\d+$/.test(l.expiry)) return { problem: `expiry ${JSON.stringify(l.expiry)} is not a number` };
  for (const [name, v] of [['ipaddr', l.ipaddr], ['hostname', l.hostname], ['clientid', l.clientid]] as const) {
    if (/\s/.test(v)) return { problem: `${name} ${JSON.stringify(v)} contains white space` };
  }
  if (l.ipaddr === '') return { problem: 'ipaddr is empty' };
  if (/\s/.test(l.mac)) return { problem: 'the MAC contains white space' };
  return { line: `${l.expiry} ${l.mac} ${l.ipaddr} ${l.hostname || '*'} ${l.clientid || '*'}` };
}
