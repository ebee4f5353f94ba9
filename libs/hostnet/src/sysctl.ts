import type { Config } from '@pvc/config';
import { describeError, type Logger } from '@pvc/runtime';
import type { SysctlPort } from './sysctl-port.js';

/** One wanted kernel parameter and why. */
export interface SysctlSetting {
  readonly key: string;
  readonly value: string;
  readonly reason: string;
}

/** `sysctl` key of a per-device parameter; dots in the device name become `/`. */
export function deviceKey(family: 'ipv4' | 'ipv6', device: string, param: string): string {
  return `net.${family}.conf.${device.replace(/\./g, '/')}.${param}`;
}

/**
 * The sysctls the original applies when networking is enabled (pvcnoded `setup_interfaces`):
 * routing, send redirects, accepting source routes, and no reverse-path filter on the cluster and
 * upstream devices and bridges (traffic pivots through the primary). Empty when networking is off.
 *
 * Differences, on purpose: the original also writes `net.ipv6.ip_forward` (no such key: IPv6
 * forwarding is `net.ipv6.conf.all.forwarding`, which is what it plainly meant — **[bug?]**) and
 * IPv6 `send_redirects`/`rp_filter` (no such keys on Linux; its commands fail silently). We write
 * the IPv6 forwarding key it intended and leave out keys that do not exist.
 */
export function planSysctls(config: Config): SysctlSetting[] {
  const net = config.system.configuration.networking;
  if (!config.functions.enable_networking || net === undefined) return [];
  const out: SysctlSetting[] = [
    { key: 'net.ipv4.ip_forward', value: '1', reason: 'route between nodes' },
    { key: 'net.ipv6.conf.all.forwarding', value: '1', reason: 'route between nodes' },
  ];
  for (const scope of ['all', 'default']) {
    out.push({ key: deviceKey('ipv4', scope, 'send_redirects'), value: '1', reason: 'send redirects' });
  }
  for (const family of ['ipv4', 'ipv6'] as const) {
    for (const scope of ['all', 'default']) {
      out.push({ key: deviceKey(family, scope, 'accept_source_route'), value: '1', reason: 'accept source routes' });
    }
  }
  const devices = [net.cluster.device, 'brcluster', net.upstream.device, 'brupstream'];
  for (const dev of [...new Set(devices)]) {
    out.push({ key: deviceKey('ipv4', dev, 'rp_filter'), value: '0', reason: 'allow traffic pivoting' });
  }
  return out;
}

/** What happened to one setting. */
export type SysctlOutcome = 'unchanged' | 'set' | 'absent' | 'failed';

/** Result of {@link applySysctls}, per key. */
export interface SysctlResult {
  readonly key: string;
  readonly value: string;
  readonly outcome: SysctlOutcome;
  readonly before?: string | undefined;
  readonly error?: string | undefined;
}

/**
 * Applies settings: reads each key, writes only those that differ. A key that does not exist
 * (a bridge not created yet) is reported `absent`; a refused write is `failed` and the pass goes on.
 */
export async function applySysctls(port: SysctlPort, settings: readonly SysctlSetting[], logger: Logger): Promise<SysctlResult[]> {
  const results: SysctlResult[] = [];
  for (const s of settings) {
    const before = await port.read(s.key);
    if (before === undefined) {
      logger.warn({ key: s.key }, 'sysctl key does not exist here; skipped');
      results.push({ key: s.key, value: s.value, outcome: 'absent' });
      continue;
    }
    if (before === s.value) {
      results.push({ key: s.key, value: s.value, outcome: 'unchanged', before });
      continue;
    }
    try {
      await port.write(s.key, s.value);
      logger.info({ key: s.key, from: before, to: s.value, reason: s.reason }, 'sysctl set');
      results.push({ key: s.key, value: s.value, outcome: 'set', before });
    } catch (err) {
      logger.error({ key: s.key, value: s.value, err: describeError(err) }, 'sysctl could not be set');
      results.push({ key: s.key, value: s.value, outcome: 'failed', before, error: describeError(err) });
    }
  }
  return results;
}
