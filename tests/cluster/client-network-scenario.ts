/**
 * Client networks with real guests, shared by `client-network-guests.test.ts` and
 * `bench/client-networks.ts`: the 3-host cluster with the node services and the primary on hv3, a
 * managed network with DHCP and a reservation per guest, busybox guests with a virtio NIC on
 * `vmbr<vni>` (tests/support/guest: `pvc.net=dhcp`, console lease/renew/ping lines), a prober
 * namespace whose veth is a port of `vmbr<vni>` on a host, and what a host holds of a network
 * (gateway, dnsmasq, devices, chains, files) to check that a removal leaves nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createExec } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { waitFor, type ClusterHost } from './harness/index.js';
import { startFailoverCluster, type FailoverCluster, type StartFailoverOptions } from './failover-scenario.js';
import { pvcDirs } from './pvc-node.js';
import { runningOn } from './migration-scenario.js';
import { consoleLeases, consoleNetErrors, guestLines } from '../support/guest/console.js';
import { waitUntil } from '../support/wait.js';

const exec = createExec();

/** A managed network of the scenario: `10.<octet>.0.0/24`, gateway `.1`, DHCP range .100–.199. */
export interface ScenarioNet {
  vni: number;
  description: string;
  prefix: string;
  gateway: string;
  bridge: string;
}

export function scenarioNet(vni: number, octet: number, description: string): ScenarioNet {
  const prefix = `10.${octet}.0`;
  return { vni, description, prefix, gateway: `${prefix}.1`, bridge: `vmbr${vni}` };
}

/** `pvc network add` arguments of the network (managed, DHCP on). */
export function networkAddArgs(n: ScenarioNet): string[] {
  return ['network', 'add', String(n.vni), '-d', n.description, '-p', 'managed', '-i', `${n.prefix}.0/24`, '-g', n.gateway,
    '--dhcp', '--dhcp-start', `${n.prefix}.100`, '--dhcp-end', `${n.prefix}.199`];
}

/** A guest with one NIC on the network and a DHCP reservation. */
export interface NetGuest {
  name: string;
  uuid: string;
  mac: string;
  ip: string;
}

/**
 * Starts the cluster (startFailoverCluster; `prepare` as there) and makes hv3 the primary
 * (`pvc node primary hv3 --wait`).
 */
export async function startClientNetCluster(name: string, log: (l: string) => void, prepare?: StartFailoverOptions['prepare']): Promise<FailoverCluster> {
  const fc = await startFailoverCluster(name, { keepaliveInterval: 1, fenceIntervals: 5, successfulFence: 'none' }, log, { prepare });
  try {
    if (fc.primary !== 'hv3') await fc.cli.ok('node', 'primary', 'hv3', '--wait', '--wait-timeout', '120');
    await waitUntil(() => fc.zk.read(paths.config.primaryNode), { what: 'hv3 primary', timeoutMs: 30_000, intervalMs: 200, until: (p) => p === 'hv3' });
    return fc;
  } catch (err) {
    await fc.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Defines the guest on `host` with its NIC on the network's bridge (`pvc vm define --target`, plus
 * `defineArgs`, e.g. `--profile <name>`), starts it (`pvc vm start --wait`) and waits until it runs
 * there. `cmdline` is for init.sh.
 */
export async function placeNetGuest(fc: FailoverCluster, g: NetGuest, n: ScenarioNet, host: ClusterHost, cmdline: string, defineArgs: string[] = []): Promise<void> {
  const xml = fc.cluster.guest.domainXml(g.name, { uuid: g.uuid, memoryMiB: 128, interfaces: [{ bridge: n.bridge, mac: g.mac }], cmdline });
  await fc.cli.define(xml, host.name, ...defineArgs);
  await fc.cli.ok('vm', 'start', g.name, '--wait', '--wait-timeout', '120');
  await waitFor(`${g.name} running on ${host.name}`, 120_000, async () => ((await runningOn(host)).includes(g.uuid) ? true : undefined), 250);
}

/** Waits (bounded) for the guest's console `lease <ip> bound` line; throws early on a `net error` line. */
export async function waitLease(fc: FailoverCluster, g: NetGuest, timeoutMs = 180_000): Promise<void> {
  const file = fc.cluster.guest.consoleLog(g.name);
  await waitUntil(() => {
    const errors = consoleNetErrors(file, g.name);
    if (errors.length > 0) throw new Error(`${g.name}'s network did not come up: ${errors.join('; ')}`);
    return consoleLeases(file, g.name).some((l) => l.ip === g.ip && l.event === 'bound');
  }, { what: `${g.name}'s console line "lease ${g.ip} bound"`, timeoutMs, intervalMs: 250 });
}

/**
 * After a live migration: waits (bounded) for 3 new console ticks after byte offset `from`. A TCG
 * guest that stops after the migration (seen here under load: the kernel's "soft lockup" lines,
 * no ticks, no answers) fails with what its console printed instead of a ping timeout.
 */
export async function guestRunsOn(fc: FailoverCluster, g: NetGuest, from: number, timeoutMs = 30_000): Promise<void> {
  const file = fc.cluster.guest.consoleLog(g.name);
  try {
    await waitUntil(() => guestLines(file, g.name, from).filter((l) => l.startsWith('tick ')).length, { what: `3 console ticks of ${g.name} after the migration`, timeoutMs, intervalMs: 200, until: (n) => n >= 3 });
  } catch (err) {
    const kernel = readFileSync(file).subarray(from).toString('utf8').split(/\r?\n/).filter((l) => /^\[\s*\d+\.\d+\]/.test(l));
    throw new Error(`${g.name} stopped running after the live migration (no console tick for ${timeoutMs} ms); its kernel printed: ${kernel.join(' | ') || 'nothing'}`, { cause: err });
  }
}

/** Hosts holding the gateway on the bridge, and hosts with a DHCP socket of dnsmasq on port 67. */
export async function servers(fc: FailoverCluster, n: ScenarioNet): Promise<{ gateway: string[]; dnsmasq: string[] }> {
  const out = { gateway: [] as string[], dnsmasq: [] as string[] };
  for (const h of fc.cluster.hosts) {
    const addrs = (await exec.run('ip', ['-n', h.netns, '-4', '-o', 'address', 'show', 'dev', n.bridge])).stdout;
    if (addrs.includes(` ${n.gateway}/`)) out.gateway.push(h.name);
    const udp = (await exec.run('ip', ['netns', 'exec', h.netns, 'ss', '-H', '-l', '-n', '-u', '-p', 'sport = :67'])).stdout;
    if (/dnsmasq/.test(udp)) out.dnsmasq.push(h.name);
  }
  return out;
}

/** True when `vmbr<vni>` exists and is up on every host. */
export async function bridgesUp(fc: FailoverCluster, n: ScenarioNet): Promise<boolean> {
  const r = await exec.run('bash', ['-c', fc.cluster.hosts.map((h) => `ip -n ${h.netns} -o link show dev ${n.bridge} up 2>/dev/null | grep -c ${n.bridge}`).join('; ')]);
  return r.stdout.split('\n').filter((l) => l.trim() === '1').length === fc.cluster.hosts.length;
}

/** Pids of dnsmasq processes (any namespace) serving the network from `host`'s hosts directory. */
function dnsmasqPids(host: ClusterHost, vni: number): number[] {
  const hostsDir = join(pvcDirs(host).run, 'dnsmasq', String(vni));
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      return /dnsmasq$/.test(argv[0] ?? '') && argv.includes(`--dhcp-hostsdir=${hostsDir}`);
    } catch {
      return false;
    }
  }).map(Number);
}

/** What `host` still holds of network `vni`: devices, nft chains, its nft file, dnsmasq, dnsmasq's files. */
export async function leftovers(host: ClusterHost, vni: number): Promise<string[]> {
  const found: string[] = [];
  const links = (await exec.run('ip', ['-n', host.netns, '-o', 'link', 'show'])).stdout;
  for (const dev of [`vmbr${vni}`, `vxlan${vni}`]) if (new RegExp(`^\\d+: ${dev}[:@]`, 'm').test(links)) found.push(`device ${dev}`);
  const ruleset = (await exec.run('ip', ['netns', 'exec', host.netns, 'nft', 'list', 'ruleset'])).stdout;
  for (const m of ruleset.matchAll(new RegExp(`chain (vxlan${vni}-(?:in|out))`, 'g'))) found.push(`nft chain ${m[1]}`);
  if (ruleset.includes(`vmbr${vni}`)) found.push(`an nft rule naming vmbr${vni}`);
  const run = pvcDirs(host).run;
  for (const f of [join(run, 'nft', 'networks', `${vni}.nft`), join(run, 'dnsmasq', String(vni)), join(run, 'dnsmasq', `dnsmasq-${vni}.pid`)]) {
    if (existsSync(f)) found.push(`file ${f}`);
  }
  for (const pid of dnsmasqPids(host, vni)) found.push(`dnsmasq pid ${pid}`);
  return found.map((x) => `${host.name}: ${x}`);
}

/** The net.bridge.bridge-nf-call-iptables of each host's namespace (bridged IPv4 through the inet hooks when 1). */
export async function bridgeNfCallIptables(fc: FailoverCluster): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const h of fc.cluster.hosts) {
    out[h.name] = (await exec.run('ip', ['netns', 'exec', h.netns, 'cat', '/proc/sys/net/bridge/bridge-nf-call-iptables'])).stdout.trim() || 'missing';
  }
  return out;
}
