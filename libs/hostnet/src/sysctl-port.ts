import { PvcError, type Exec } from '@pvc/runtime';

/**
 * The port to kernel parameters. Keys are `sysctl` names (`net.ipv4.ip_forward`); a device name
 * containing dots is written with `/` in its place (`net.ipv4.conf.ens4/100.rp_filter`), as
 * `sysctl(8)` expects.
 */
export interface SysctlPort {
  /** The current value, or undefined when the key does not exist on this kernel/host. */
  read(key: string): Promise<string | undefined>;
  /** Sets a key; throws {@link SysctlError} when the kernel refuses. */
  write(key: string, value: string): Promise<void>;
}

/** A refused or failed sysctl operation (code `SYSCTL_FAILED`). */
export class SysctlError extends PvcError {
  constructor(message: string, cause?: unknown) {
    super('SYSCTL_FAILED', message, { cause, retryable: false });
  }
}

const TIMEOUT_MS = 5_000;

/** The real port: `sysctl -n <key>` and `sysctl -w <key>=<value>` (procps) through Exec. */
export function createExecSysctl(exec: Exec): SysctlPort {
  return {
    async read(key) {
      const r = await exec.run('sysctl', ['-n', key], { timeoutMs: TIMEOUT_MS });
      return r.exitCode === 0 ? r.stdout.trim() : undefined;
    },
    async write(key, value) {
      const r = await exec.run('sysctl', ['-w', `${key}=${value}`], { timeoutMs: TIMEOUT_MS });
      if (r.exitCode !== 0) throw new SysctlError(`sysctl ${key}=${value} failed: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
    },
  };
}

/** In-memory port for unit tests: only the keys it was given exist; `refuse` makes writes fail. */
export class FakeSysctl implements SysctlPort {
  readonly values: Map<string, string>;
  readonly writes: [string, string][] = [];
  readonly refuse = new Set<string>();

  constructor(initial: Record<string, string> = {}) {
    this.values = new Map(Object.entries(initial));
  }

  async read(key: string): Promise<string | undefined> {
    return this.values.get(key);
  }

  async write(key: string, value: string): Promise<void> {
    if (!this.values.has(key)) throw new SysctlError(`sysctl: cannot stat /proc/sys/${key.replace(/\./g, '/')}: No such file or directory`);
    if (this.refuse.has(key)) throw new SysctlError(`sysctl: permission denied on key "${key}"`);
    this.writes.push([key, value]);
    this.values.set(key, value);
  }
}
