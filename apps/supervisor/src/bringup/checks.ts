import type { Config } from '@pvc/config';
import { bmcName, type Ipmi } from '@pvc/ipmi';
import { describeError, PvcError, type Exec, type Logger } from '@pvc/runtime';

/** libvirt is unreachable (code `LIBVIRT_UNREACHABLE`): the original cleans up and exits 1. */
export class LibvirtUnreachableError extends PvcError {
  constructor(message: string) {
    super('LIBVIRT_UNREACHABLE', message, { retryable: true });
  }
}

/**
 * Start-up step "the node checks if Libvirt is accessible": `virsh -c <libvirt_uri> version`,
 * bounded. Throws {@link LibvirtUnreachableError} naming the URI; skipped without the hypervisor.
 */
export async function checkLibvirt(config: Config, exec: Exec, logger: Logger, timeoutMs = 10_000): Promise<void> {
  if (!config.functions.enable_hypervisor) return;
  const uri = config.system.configuration.hypervisor.libvirt_uri;
  let detail: string;
  try {
    const r = await exec.run('virsh', ['-c', uri, 'version'], { timeoutMs });
    if (r.exitCode === 0) {
      logger.info({ uri }, 'libvirt is reachable');
      return;
    }
    detail = r.stderr.trim().split('\n')[0] ?? `exit ${r.exitCode}`;
  } catch (err) {
    detail = describeError(err);
  }
  throw new LibvirtUnreachableError(
    `libvirt is not reachable at ${uri} (${detail}). Check that libvirtd runs and listens there ` +
      '(the original requires qemu+tcp on the node\'s hostname), or set pvc.system.configuration.hypervisor.libvirt_uri; ' +
      'the node cannot run VMs until it is, so the supervisor stops here',
  );
}

/**
 * Start-up step "IPMI self-check": asks this node's own BMC for the chassis power state (2 s, as
 * the original). Only logged: `on` is fine; anything else warns that fencing this node may fail.
 * The BMC is named host:port; the password never reaches a log line.
 */
export async function ipmiSelfCheck(config: Config, ipmi: Ipmi, logger: Logger, timeoutMs = 2_000): Promise<boolean> {
  const i = config.system.fencing.ipmi;
  const target = { host: i.host, port: i.port, user: i.user, pass: i.pass };
  try {
    const state = await ipmi.powerStatus(target, { timeoutMs });
    if (state === 'on') {
      logger.info({ bmc: bmcName(target) }, 'IPMI self-check: chassis power is on');
      return true;
    }
    logger.warn({ bmc: bmcName(target), state }, 'IPMI self-check: unexpected chassis power state');
  } catch (err) {
    logger.warn({ bmc: bmcName(target), err: describeError(err) }, 'IPMI self-check failed: other nodes may be unable to fence this one');
  }
  return false;
}
