/**
 * The lease hook's logic (pvc-inventory §7.2): dnsmasq runs `--dhcp-script` as
 * `init` | `add|old|del <mac> <ip> [hostname]` with the lease in its environment
 * (`DNSMASQ_LEASE_EXPIRES`, or `DNSMASQ_LEASE_LENGTH` when built with a broken RTC;
 * `DNSMASQ_CLIENT_ID`; see `man dnsmasq`, --dhcp-script and --leasefile-ro), and waits for it.
 *
 * - `init`: prints every stored lease in dnsmasq's lease-file format, so a dnsmasq started on a new
 *   primary (or restarted) knows the leases given before. A stored lease that would break dnsmasq's
 *   parse is left out, named on stderr.
 * - `add`: stores the lease (delete + recreate in one transaction, `lease-store.ts`).
 * - `del`: deletes it recursively.
 * - `old`: the original does nothing. With `--leasefile-ro`, dnsmasq reports every renewal (new
 *   expiry), client-id and hostname change as `old`: the script IS the lease database, so doing
 *   nothing leaves a stale expiry that a later `init` hands back **[bug?]**. We store the lease when
 *   it differs from the stored one; the `old` events dnsmasq sends for every lease at its start and
 *   on SIGHUP echo what is stored, so they only read (the original connected for them as well).
 *   `DNSMASQ_DATA_MISSING=1` does not mark those echoes: a renewal's `old` carries it too.
 * - Any other action (`arp-add`, `tftp`, …): ignored, as the man page asks.
 *
 * The VNI is the digits of `DNSMASQ_BRIDGE_INTERFACE` (as the original); Zookeeper is at
 * `PVC_ZK_HOSTS` (comma-separated) and `PVC_ZK_PORT`, set by netd in dnsmasq's environment.
 * Errors go to stderr naming the key; the exit code is then 1 (2 for a bad call).
 */
import { describeError } from '@pvc/runtime';
import { DEFAULT_ZK_PORT, paths, type ZkClient } from '@pvc/zk';
import { HOOK_ENV } from './dnsmasq-args.js';
import { deleteLease, initLeases, readLease, storeLease, type Lease } from './lease-store.js';

/** The hook's process-level inputs and outputs. */
export interface HookIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  stdout(text: string): void;
  /** One line (no newline) for dnsmasq's log. */
  stderr(line: string): void;
}

/** Opens a Zookeeper session (the real one: `connectZk` with short deadlines). */
export type HookConnect = (hosts: string[], port: number) => Promise<ZkClient>;

/** Overall deadline of one hook run: dnsmasq runs the next event only after this one exits. */
export const HOOK_DEADLINE_MS = 15_000;

const PREFIX = 'pvc lease hook';
const LEASE_ACTIONS = new Set(['add', 'old', 'del']);

function sameLease(a: Lease, b: Lease): boolean {
  return a.expiry === b.expiry && a.ipaddr === b.ipaddr && a.hostname === b.hostname && a.clientid === b.clientid;
}

function leaseFrom(io: HookIo, mac: string, ipaddr: string): Lease {
  const env = io.env;
  return {
    mac,
    ipaddr,
    hostname: io.argv[3] ?? '',
    expiry: env.DNSMASQ_LEASE_EXPIRES ?? env.DNSMASQ_LEASE_LENGTH ?? '0',
    clientid: env.DNSMASQ_CLIENT_ID || '*',
  };
}

async function init(zk: ZkClient, vni: string, io: HookIo): Promise<void> {
  const r = await initLeases(zk, vni);
  for (const l of r.leftOut) io.stderr(`${PREFIX}: init: ${l.key} left out: ${l.problem}`);
  io.stdout(r.text);
  io.stderr(`${PREFIX}: init: ${r.count} lease(s) from ${paths.network(vni).leases}`);
}

async function act(zk: ZkClient, vni: string, action: string, lease: Lease, io: HookIo): Promise<void> {
  const key = paths.network(vni).lease(lease.mac).root;
  if (action === 'del') {
    await deleteLease(zk, vni, lease.mac);
    io.stderr(`${PREFIX}: del ${lease.mac} ${lease.ipaddr}: ${key} deleted`);
    return;
  }
  if (action === 'old') {
    const stored = await readLease(zk, vni, lease.mac);
    if (stored && sameLease(stored, lease)) return;
  }
  await storeLease(zk, vni, lease);
  io.stderr(`${PREFIX}: ${action} ${lease.mac} ${lease.ipaddr}: ${key} stored (expiry ${lease.expiry})`);
}

/** Runs one hook call; resolves with the exit code. Never throws. */
export async function runLeaseHook(io: HookIo, connect: HookConnect): Promise<number> {
  const [action, mac, ipaddr] = io.argv;
  if (action === undefined) {
    io.stderr(`${PREFIX}: usage: init | add|old|del <mac> <ip> [hostname]`);
    return 2;
  }
  if (action !== 'init' && !LEASE_ACTIONS.has(action)) return 0;
  if (action !== 'init' && (!mac || !ipaddr)) {
    io.stderr(`${PREFIX}: ${action}: the MAC and IP address arguments are missing`);
    return 2;
  }
  const vni = /\d+/.exec(io.env[HOOK_ENV.bridge] ?? '')?.[0];
  const hosts = (io.env[HOOK_ENV.zkHosts] ?? '').split(',').filter((h) => h !== '');
  if (vni === undefined || hosts.length === 0) {
    io.stderr(`${PREFIX}: ${action}: ${vni === undefined ? HOOK_ENV.bridge : HOOK_ENV.zkHosts} is not set (netd sets it in dnsmasq's environment)`);
    return 1;
  }
  const port = Number(io.env[HOOK_ENV.zkPort] ?? DEFAULT_ZK_PORT) || DEFAULT_ZK_PORT;
  let zk: ZkClient | undefined;
  try {
    zk = await connect(hosts, port);
    if (action === 'init') await init(zk, vni, io);
    else await act(zk, vni, action, leaseFrom(io, mac ?? '', ipaddr ?? ''), io);
    return 0;
  } catch (err) {
    const what = action === 'init' ? paths.networks : `${action} ${mac ?? ''} ${ipaddr ?? ''}`;
    const where = zk ? '' : ` (Zookeeper at ${hosts.join(',')} port ${port})`;
    io.stderr(`${PREFIX}: ${what}: ${describeError(err)}${where}`);
    return 1;
  } finally {
    await zk?.close().catch(() => undefined);
  }
}
