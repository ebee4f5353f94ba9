/**
 * The dnsmasq command line of one managed network, as the original builds it (pvc-inventory §7.2,
 * `VXNetworkInstance.startDHCPServer`). Pure; the golden list is in `dnsmasq-args.spec.ts`.
 *
 * Differences from the original, each deliberate:
 * - logs go straight to `<log_directory>/dnsmasq/dnsmasq-<vni>.log` (`--log-facility=<file>`)
 *   instead of stderr redirected by the daemon;
 * - `--pid-file` per network (the original let every instance write the default pid file);
 * - `--conf-file=/dev/null`: the host's `/etc/dnsmasq.conf` is not read (the original inherited
 *   whatever it says);
 * - the duplicate `--domain-needed` is written once.
 */
import { paths } from '@pvc/zk';
import { DhcpError } from './errors.js';
import { bridgeOf, type DnsmasqLayout } from './layout.js';

/** What dnsmasq needs of `/networks/<vni>` (decoded; `null` = the original's `"None"`). */
export interface DnsmasqNetwork {
  readonly vni: string;
  /** `domain` */
  readonly domain: string;
  readonly ip4Gateway: string | null;
  readonly ip6Gateway: string | null;
  readonly dhcp4Flag: boolean;
  readonly dhcp6Flag: boolean;
  readonly dhcp4Start: string | null;
  readonly dhcp4End: string | null;
}

/** Where the lease hook finds Zookeeper (passed in dnsmasq's environment, which the hook inherits). */
export interface HookZk {
  /** `cluster.coordinators` */
  readonly hosts: readonly string[];
  /** `database.zookeeper.port` */
  readonly port: number;
}

/** The environment variables netd gives dnsmasq (and through it the lease hook). */
export const HOOK_ENV = {
  /** As the original: the hook takes the VNI from the digits of this name. */
  bridge: 'DNSMASQ_BRIDGE_INTERFACE',
  zkHosts: 'PVC_ZK_HOSTS',
  zkPort: 'PVC_ZK_PORT',
  /** Set only when netd wrote the stored leases for `init` to this file just before the start. */
  initLeases: 'PVC_INIT_LEASES',
} as const;

const ADDR = /^[0-9A-Fa-f:.]+$/;
const DOMAIN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/;

function bad(vni: string, key: string, what: string): DhcpError {
  return new DhcpError('DHCP_BAD_NETWORK', vni, `${key}: ${what}; dnsmasq for network ${vni} not started`);
}

function address(net: DnsmasqNetwork, value: string | null, key: 'ip4Gateway' | 'ip6Gateway' | 'dhcp4Start' | 'dhcp4End'): string {
  const path = paths.network(net.vni)[key];
  if (value === null || value === '') throw bad(net.vni, path, 'is None or empty');
  if (!ADDR.test(value)) throw bad(net.vni, path, `${JSON.stringify(value)} is not an address`);
  return value;
}

/** Throws {@link DhcpError} `DHCP_BAD_NETWORK` naming the key when `net` cannot make a command line. */
export function validateNetwork(net: DnsmasqNetwork): void {
  if (!/^\d+$/.test(net.vni)) throw bad(net.vni, `/networks/${net.vni}`, 'the VNI is not a number');
  if (!DOMAIN.test(net.domain)) throw bad(net.vni, paths.network(net.vni).domain, `${JSON.stringify(net.domain)} is not a domain name`);
  if (net.dhcp6Flag) address(net, net.ip6Gateway, 'ip6Gateway');
  else address(net, net.ip4Gateway, 'ip4Gateway');
  if (net.dhcp4Flag) {
    address(net, net.ip4Gateway, 'ip4Gateway');
    address(net, net.dhcp4Start, 'dhcp4Start');
    address(net, net.dhcp4End, 'dhcp4End');
  }
}

/** The arguments after `dnsmasq`. Throws {@link DhcpError} `DHCP_BAD_NETWORK` (see {@link validateNetwork}). */
export function dnsmasqArgs(net: DnsmasqNetwork, layout: DnsmasqLayout): string[] {
  validateNetwork(net);
  const d = net.domain;
  const bridge = bridgeOf(net.vni);
  const args = [
    '--conf-file=/dev/null',
    '--domain-needed',
    '--bogus-priv',
    '--no-hosts',
    '--dhcp-authoritative',
    '--filterwin2k',
    '--expand-hosts',
    `--domain=${d}`,
    `--local=/${d}/`,
    `--log-facility=${layout.logFile}`,
    '--log-dhcp',
    '--keep-in-foreground',
    `--pid-file=${layout.pidFile}`,
    '--leasefile-ro',
    `--dhcp-script=${layout.hookScript}`,
    `--dhcp-hostsdir=${layout.hostsDir}`,
    '--bind-interfaces',
  ];
  const listen = (gw: string): string[] => [`--listen-address=${gw}`, `--auth-zone=${d}`, `--auth-peer=${gw}`, `--auth-server=${gw}`, `--auth-sec-servers=${gw}`];
  if (net.dhcp6Flag) {
    const gw6 = net.ip6Gateway ?? '';
    args.push(...listen(gw6), `--dhcp-option=option6:dns-server,[${gw6}]`, `--dhcp-option=option6:sntp-server,[${gw6}]`, '--enable-ra');
    if (net.dhcp4Flag) args.push(`--dhcp-range=net:${bridge},::,constructor:${bridge},ra-stateless,ra-names`);
    else args.push(`--auth-server=${gw6}`, `--dhcp-range=net:${bridge},::2,::ffff:ffff:ffff:ffff,constructor:${bridge},64,24h`);
  } else {
    args.push(...listen(net.ip4Gateway ?? ''));
  }
  if (net.dhcp4Flag) {
    args.push(`--dhcp-option=option:ntp-server,${net.ip4Gateway ?? ''}`, `--dhcp-range=${net.dhcp4Start ?? ''},${net.dhcp4End ?? ''},48h`);
  }
  return args;
}

/** dnsmasq's extra environment: the bridge (as the original) and where the hook finds Zookeeper. */
export function dnsmasqEnv(net: Pick<DnsmasqNetwork, 'vni'>, zk: HookZk): Record<string, string> {
  return { [HOOK_ENV.bridge]: bridgeOf(net.vni), [HOOK_ENV.zkHosts]: zk.hosts.join(','), [HOOK_ENV.zkPort]: String(zk.port) };
}
