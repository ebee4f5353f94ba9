import type { Exec, ExecResult } from '@pvc/runtime';
import type { IpmiEndpoint } from './types.js';

/**
 * `ipmitool` arguments reaching a simulated BMC over RMCP+ (lanplus). Always passes `-C`: without it
 * ipmitool asks for the cipher suites first, which ipmi_sim does not answer (~10 s timeout).
 */
export function ipmitoolArgs(bmc: IpmiEndpoint, command: readonly string[]): string[] {
  return [
    '-I', 'lanplus', '-C', String(bmc.cipherSuite),
    '-H', bmc.host, '-p', String(bmc.port), '-U', bmc.user, '-P', bmc.pass,
    ...command,
  ];
}

/** Runs ipmitool against a BMC (from the root namespace); the password never reaches logs. */
export function ipmitool(exec: Exec, bmc: IpmiEndpoint, command: readonly string[]): Promise<ExecResult> {
  return exec.run('ipmitool', ipmitoolArgs(bmc, command), { timeoutMs: 30_000, secrets: [bmc.pass] });
}
