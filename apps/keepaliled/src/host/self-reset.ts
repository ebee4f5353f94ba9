import { writeFile } from 'node:fs/promises';
import type { Exec, Logger } from '@pvc/runtime';
import { describeError } from '@pvc/runtime';
import type { SelfReset } from '../ports.js';

/**
 * The real {@link SelfReset}: the configured `system.fencing.suicide_command` (run with `sh -c`),
 * else an immediate kernel reboot through `/proc/sysrq-trigger` (no clean shutdown: a node that is
 * cut off must be gone before the fencer's wait ends, not after a 90 s systemd stop).
 */
export function createSelfReset(deps: { exec: Exec; logger: Logger; command?: string | undefined }): SelfReset {
  return {
    async reset(reason: string): Promise<void> {
      deps.logger.fatal({ reason, command: deps.command ?? 'sysrq b' }, 'resetting this node');
      if (deps.command) {
        const r = await deps.exec.run('sh', ['-c', deps.command], { timeoutMs: 30_000 }).catch((err: unknown) => ({ exitCode: -1, stderr: describeError(err) }));
        if (r.exitCode !== 0) deps.logger.error({ exitCode: r.exitCode, stderr: r.stderr }, 'suicide_command failed');
        return;
      }
      await writeFile('/proc/sysrq-trigger', 'b');
    },
  };
}
