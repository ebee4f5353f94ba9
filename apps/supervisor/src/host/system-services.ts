import { connect } from 'node:net';
import { describeError, PvcError, type Exec } from '@pvc/runtime';

/** A readiness probe of a dependent service. */
export type Probe =
  | { readonly kind: 'zookeeper'; readonly port: number; readonly host?: string }
  | { readonly kind: 'libvirt'; readonly uri: string }
  | { readonly kind: 'ceph-mon' }
  | { readonly kind: 'ceph-mgr' }
  | { readonly kind: 'frr' }
  | { readonly kind: 'postgresql'; readonly targets: readonly { host: string; port: number }[] };

/** Result of one probe. */
export interface ProbeResult {
  readonly ready: boolean;
  /** Why not (or what answered), for logs. */
  readonly detail: string;
}

/** The port to the host's service manager and the services' readiness. */
export interface SystemServices {
  /** `systemctl start <unit>`; throws {@link ServiceStartError} when it fails. */
  start(unit: string, opts?: { signal?: AbortSignal }): Promise<void>;
  /** One readiness check (bounded; never throws for "not ready"). */
  probe(probe: Probe, opts?: { signal?: AbortSignal }): Promise<ProbeResult>;
}

/** `systemctl start` failed (code `SERVICE_START_FAILED`). */
export class ServiceStartError extends PvcError {
  constructor(message: string) {
    super('SERVICE_START_FAILED', message, { retryable: true });
  }
}

const PROBE_TIMEOUT_MS = 3_000;

/** Zookeeper's `ruok` four-letter command over TCP: ready when it answers `imok`. */
export function zookeeperRuok(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let out = '';
    const s = connect(port, host);
    s.setTimeout(timeoutMs, () => s.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    s.on('connect', () => s.end('ruok'));
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('close', () => resolve(out === 'imok' ? { ready: true, detail: 'imok' } : { ready: false, detail: out === '' ? `no answer from ${host}:${port}` : `answered "${out}"` }));
    s.on('error', (err) => resolve({ ready: false, detail: `${host}:${port}: ${err.message}` }));
  });
}

async function execProbe(exec: Exec, cmd: string, args: string[], signal: AbortSignal | undefined, ok?: RegExp): Promise<ProbeResult> {
  try {
    const r = await exec.run(cmd, args, { timeoutMs: PROBE_TIMEOUT_MS, signal });
    const text = (r.stdout + r.stderr).trim().split('\n')[0] ?? '';
    const ready = r.exitCode === 0 && (ok === undefined || ok.test(r.stdout));
    return { ready, detail: ready ? text : `${cmd} ${args.join(' ')}: exit ${r.exitCode}${text ? `: ${text}` : ''}` };
  } catch (err) {
    return { ready: false, detail: describeError(err) };
  }
}

/** Options of {@link createSystemServices}. */
export interface SystemServicesOptions {
  /** The program run as `<systemctl> start <unit>` (default `systemctl`; see RunOptions.systemctl). */
  readonly systemctl?: string;
}

/**
 * The real port: `systemctl start` (or the configured systemctl-compatible program) and probes — Zookeeper `ruok` on `host` (the node name; localhost if unset),
 * `virsh -c <uri> version`, `ceph mon stat`, `ceph mgr stat` (available), `vtysh -c 'show version'`,
 * `pg_isready` for every configured database address.
 */
export function createSystemServices(exec: Exec, o: SystemServicesOptions = {}): SystemServices {
  const systemctl = o.systemctl ?? 'systemctl';
  return {
    async start(unit, opts = {}) {
      const r = await exec.run(systemctl, ['start', unit], { timeoutMs: 90_000, signal: opts.signal });
      if (r.exitCode !== 0) throw new ServiceStartError(`${systemctl} start ${unit}: exit ${r.exitCode}: ${r.stderr.trim()}`);
    },
    async probe(p, opts = {}) {
      const sig = opts.signal;
      switch (p.kind) {
        case 'zookeeper':
          return zookeeperRuok(p.host ?? '127.0.0.1', p.port);
        case 'libvirt':
          return execProbe(exec, 'virsh', ['-c', p.uri, 'version'], sig);
        case 'ceph-mon':
          return execProbe(exec, 'ceph', ['--connect-timeout', '3', 'mon', 'stat'], sig);
        case 'ceph-mgr':
          return execProbe(exec, 'ceph', ['--connect-timeout', '3', 'mgr', 'stat'], sig, /"available":\s*true/);
        case 'frr':
          return execProbe(exec, 'vtysh', ['-c', 'show version'], sig);
        case 'postgresql':
          for (const t of p.targets) {
            const r = await execProbe(exec, 'pg_isready', ['-h', t.host, '-p', String(t.port), '-t', '2'], sig);
            if (!r.ready) return r;
          }
          return { ready: true, detail: 'accepting connections' };
      }
    },
  };
}
