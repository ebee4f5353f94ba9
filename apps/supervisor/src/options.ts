import { PvcError } from '@pvc/runtime';
import type { ServiceFlag } from '@pvc/rpc';

/**
 * How the supervisor runs.
 * - `standalone` (default): it spawns netd, vmd, cephd and keepaliled and restarts them.
 * - `systemd`: systemd runs each service as its own unit; the supervisor does bring-up and
 *   registration, signals readiness (`Type=notify`) and stays up to serve status and to write the
 *   daemon state `shutdown`→`stop` when it is stopped.
 */
export type RunMode = 'standalone' | 'systemd';

/** Options of one supervisor run, from flags and the environment. */
export interface RunOptions {
  readonly mode: RunMode;
  /**
   * Do not start coordinator services (Zookeeper, Ceph mon/mgr, FRR, PostgreSQL): only wait for
   * their readiness probes. For hosts where something else runs them (no systemd as PID 1, test
   * harnesses). `--external-services` or `PVC_EXTERNAL_SERVICES=1`.
   */
  readonly externalServices: boolean;
  /**
   * The `systemctl` the coordinator-service step runs (`<systemctl> start <unit>`): `systemctl` on
   * a real node; a harness without systemd as PID 1 gives a compatible program that starts its own
   * service scripts (tests/cluster: `sh/systemctl-shim.sh`). `--systemctl <path>` or `PVC_SYSTEMCTL`.
   */
  readonly systemctl: string;
  /** How long to try to reach Zookeeper before starting over from the top (`--zk-timeout`, s). */
  readonly zkTimeoutMs: number;
  /** Bound of each coordinator service's readiness wait (`--service-timeout`, s). */
  readonly serviceTimeoutMs: number;
}

/** The supervisor's own flags (added to the common ones of every service). */
export const SUPERVISOR_FLAGS: Readonly<Record<string, ServiceFlag>> = {
  mode: { type: 'string', help: 'standalone (spawn the other services; default) or systemd (default when started by systemd)' },
  'external-services': { type: 'boolean', help: 'do not start coordinator services, only wait for them (also PVC_EXTERNAL_SERVICES=1)' },
  systemctl: { type: 'string', help: 'program run as "<program> start <unit>" to start coordinator services (default systemctl; also PVC_SYSTEMCTL)' },
  'zk-timeout': { type: 'string', help: 'seconds to try Zookeeper before starting bring-up again (default 60)' },
  'service-timeout': { type: 'string', help: 'seconds to wait for each coordinator service to become ready (default 120)' },
};

/** A bad supervisor flag (exit 2). */
export class OptionsError extends PvcError {
  constructor(message: string) {
    super('BAD_OPTION', message, { retryable: false });
  }
}

function seconds(flag: string, raw: string | boolean | undefined, dflt: number): number {
  if (raw === undefined) return dflt * 1000;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isFinite(n) || n <= 0) throw new OptionsError(`--${flag}: expected a positive number of seconds, got "${String(raw)}"`);
  return Math.round(n * 1000);
}

/** Flags + environment → options. systemd mode is chosen by `--mode systemd`, else by `NOTIFY_SOCKET` (set by systemd for a `Type=notify` unit). `INVOCATION_ID` is not used: processes started from any unit (a CI runner) inherit it. */
export function resolveRunOptions(flags: Readonly<Record<string, string | boolean | undefined>>, env: NodeJS.ProcessEnv): RunOptions {
  const raw = flags.mode;
  if (raw !== undefined && raw !== 'standalone' && raw !== 'systemd') {
    throw new OptionsError(`--mode: expected standalone or systemd, got "${String(raw)}"`);
  }
  const bySystemd = env.NOTIFY_SOCKET !== undefined && env.NOTIFY_SOCKET !== '';
  const systemctl = flags.systemctl ?? (env.PVC_SYSTEMCTL || 'systemctl');
  if (typeof systemctl !== 'string' || systemctl === '') throw new OptionsError('--systemctl: expected the path of a systemctl-compatible program');
  return {
    mode: raw ?? (bySystemd ? 'systemd' : 'standalone'),
    externalServices: flags['external-services'] === true || env.PVC_EXTERNAL_SERVICES === '1',
    systemctl,
    zkTimeoutMs: seconds('zk-timeout', flags['zk-timeout'], 60),
    serviceTimeoutMs: seconds('service-timeout', flags['service-timeout'], 120),
  };
}
