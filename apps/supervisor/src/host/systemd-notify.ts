import { describeError, type Exec, type Logger } from '@pvc/runtime';

/**
 * Tells systemd the unit is ready (`Type=notify`): `systemd-notify --ready` when `NOTIFY_SOCKET`
 * is set (the unit needs `NotifyAccess=all`, as the message comes from a child). Without the
 * socket it does nothing.
 */
export async function notifyReady(exec: Exec, env: NodeJS.ProcessEnv, logger: Logger, status = 'registered'): Promise<boolean> {
  if (!env.NOTIFY_SOCKET) return false;
  try {
    const r = await exec.run('systemd-notify', ['--ready', `--pid=${process.pid}`, `--status=${status}`], { timeoutMs: 5_000 });
    if (r.exitCode !== 0) logger.warn({ stderr: r.stderr.trim() }, 'systemd-notify --ready failed');
    return r.exitCode === 0;
  } catch (err) {
    logger.warn({ err: describeError(err) }, 'systemd-notify --ready failed');
    return false;
  }
}
