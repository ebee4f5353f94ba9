/**
 * The DNS aggregator's settings from the config, and the `pdns_server` command line built from
 * them (pvc-inventory §7.3, `DNSAggregatorInstance.PowerDNSInstance.start`). Pure; the golden
 * list is in `settings.spec.ts`.
 *
 * Differences from the original's command line, each deliberate:
 * - the database password is not on the command line (where `ps` shows it): it is the only line
 *   of `<socket dir>/pdns.conf` (mode 0600), read through `--config-dir` instead of `--no-config`;
 * - `--guardian=no`: netd supervises pdns_server itself (it is started again at the next pass);
 * - `--setuid`/`--setgid` {@link PDNS_USER}: pdns_server binds port 53, reads the password file and
 *   makes its control socket as root, then runs as the `pdns` user Debian's `pdns-server` package
 *   creates (the original runs it as root, like the node daemon that starts it);
 * - `--default-soa-name` is gone: PowerDNS 4.7 (Debian 12) refuses it as an unknown setting, and
 *   every zone the aggregator serves has its own SOA row;
 * - the listen addresses and port come from the settings (the cluster and upstream floating
 *   addresses, port 53, in production; loopback addresses in tests).
 *
 * @module
 */
import type { Config, DatabaseSettings } from '@pvc/config';
import { join } from 'node:path';

/** The config key every database message names. */
export const DNS_DATABASE_KEY = 'coordinator.dns.database';

/** Everything the aggregator takes from the config. */
export interface AggregatorSettings {
  /** `coordinator.dns.database` */
  readonly database: DatabaseSettings;
  /** Where pdns_server listens: the cluster, then the upstream floating address (no prefix). */
  readonly listenAddresses: readonly string[];
  readonly port: number;
  /** `<dynamic_directory>/pdns`: control socket, pid file, the password file. */
  readonly socketDir: string;
  /** `<log_directory>/pdns-aggregator.log` (the original's file). */
  readonly logFile: string;
  /** `cluster.networks.upstream.domain`: the SOA and default NS names. */
  readonly upstreamDomain: string;
}

/** Used when `cluster.networks.upstream.domain` is `None`: the original's `dns.pvc.local` family. */
export const FALLBACK_UPSTREAM_DOMAIN = 'pvc.local';

const ipOf = (cidr: string): string => cidr.split('/')[0] ?? cidr;

/**
 * The aggregator's settings, or undefined when this node never runs it: not a coordinator, or
 * networking off (then `coordinator.dns` and the floating addresses are absent).
 */
export function aggregatorSettings(config: Config): AggregatorSettings | undefined {
  const nets = config.cluster.networks;
  if (!config.isCoordinator || !config.functions.enable_networking || !config.coordinator || !nets) return undefined;
  const dirs = config.system.configuration.directories;
  return {
    database: config.coordinator.dns.database,
    listenAddresses: [ipOf(nets.cluster.floating_ip), ipOf(nets.upstream.floating_ip)],
    port: 53,
    socketDir: join(dirs.dynamic_directory, 'pdns'),
    logFile: join(dirs.log_directory, 'pdns-aggregator.log'),
    upstreamDomain: nets.upstream.domain ?? FALLBACK_UPSTREAM_DOMAIN,
  };
}

/** The unprivileged user (and group) pdns_server runs as once it has bound its port. */
export const PDNS_USER = 'pdns';

/** The arguments after `pdns_server` (the password is in the config file, see the module comment). */
export function pdnsArgs(s: Omit<AggregatorSettings, 'logFile' | 'upstreamDomain'>): string[] {
  const db = s.database;
  return [
    `--config-dir=${s.socketDir}`,
    '--daemon=no',
    '--guardian=no',
    `--setuid=${PDNS_USER}`,
    `--setgid=${PDNS_USER}`,
    '--disable-syslog=yes',
    '--disable-axfr=no',
    '--allow-axfr-ips=0.0.0.0/0',
    `--local-address=${s.listenAddresses.join(',')}`,
    `--local-port=${s.port}`,
    '--log-dns-details=on',
    '--loglevel=3',
    '--master=yes',
    '--slave=yes',
    '--slave-renotify=yes',
    '--version-string=powerdns',
    // No zone cache: PowerDNS (4.5+) otherwise learns a zone added to the database only at its next
    // refresh (300 s), so a new managed network's names went unanswered meanwhile. Each query looks
    // its zone up in PostgreSQL instead; the zones are few and small.
    '--zone-cache-refresh-interval=0',
    `--socket-dir=${s.socketDir}`,
    '--launch=gpgsql',
    `--gpgsql-host=${db.host}`,
    `--gpgsql-port=${db.port}`,
    `--gpgsql-dbname=${db.name}`,
    `--gpgsql-user=${db.user}`,
    '--gpgsql-dnssec=no',
  ];
}

/** The content of `<socketDir>/pdns.conf`: only the password. */
export function pdnsConfigFile(db: Pick<DatabaseSettings, 'pass'>): string {
  return `gpgsql-password=${db.pass}\n`;
}
