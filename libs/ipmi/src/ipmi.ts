/**
 * The IPMI port: chassis power status / off / on of one node's BMC. The real adapter is
 * `ipmi-ipmitool.ts`; tests use `ipmi-fake.ts`.
 *
 * Safety contract: a password never appears in a log line or an error message. Everything that
 * names a BMC names it by {@link bmcName} (host:port), never with its credentials.
 */
import { PvcError } from '@pvc/runtime';

/** Chassis power as reported by the BMC. */
export type PowerState = 'on' | 'off';

/** Default RMCP+ cipher suite (3 = RAKP-HMAC-SHA1 / HMAC-SHA1-96 / AES-CBC-128, universally supported). */
export const DEFAULT_CIPHER_SUITE = 3;
/** Default RMCP port of a BMC. */
export const DEFAULT_IPMI_PORT = 623;
/** Default upper bound of one IPMI call, ms. */
export const DEFAULT_IPMI_TIMEOUT_MS = 5_000;

/** How to reach one BMC. */
export interface IpmiTarget {
  host: string;
  /** Default {@link DEFAULT_IPMI_PORT}. */
  port?: number;
  user: string;
  /** Secret: never logged, never part of an error message. */
  pass: string;
  /** RMCP+ cipher suite (`ipmitool -C`). Default {@link DEFAULT_CIPHER_SUITE}. */
  cipherSuite?: number;
}

/** Per-call options: every call is bounded and cancellable. */
export interface IpmiCallOptions {
  /** Upper bound of this call, ms. Default {@link DEFAULT_IPMI_TIMEOUT_MS}. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The port. Each method either resolves with the BMC's answer or rejects with an {@link IpmiError}. */
export interface Ipmi {
  /** The chassis power state. */
  powerStatus(target: IpmiTarget, opts?: IpmiCallOptions): Promise<PowerState>;
  /** Hard power off (not an ACPI soft shutdown). Resolves when the BMC accepted the command. */
  powerOff(target: IpmiTarget, opts?: IpmiCallOptions): Promise<void>;
  /** Power on. Resolves when the BMC accepted the command. */
  powerOn(target: IpmiTarget, opts?: IpmiCallOptions): Promise<void>;
}

/** The operations of the port, as named in errors and fence steps. */
export type IpmiOperation = 'power status' | 'power off' | 'power on';

/**
 * Stable codes of {@link IpmiError}:
 * - `IPMI_UNREACHABLE`: no answer (timeout, no session could be established, connection refused,
 *   name lookup failed, the session dropped mid-command). Retrying may help.
 * - `IPMI_AUTH`: the BMC refused the credentials (bad user or password, insufficient privilege,
 *   unsupported cipher suite). Retrying does not help.
 * - `IPMI_REJECTED`: the BMC answered the command with an error completion code
 *   (e.g. "Unspecified error", "Node busy"). Retrying may help.
 * - `IPMI_BAD_OUTPUT`: the tool's answer could not be understood. Retrying does not help.
 */
export type IpmiErrorCode = 'IPMI_UNREACHABLE' | 'IPMI_AUTH' | 'IPMI_REJECTED' | 'IPMI_BAD_OUTPUT';

const RETRYABLE: Readonly<Record<IpmiErrorCode, boolean>> = {
  IPMI_UNREACHABLE: true,
  IPMI_AUTH: false,
  IPMI_REJECTED: true,
  IPMI_BAD_OUTPUT: false,
};

/** `host:port` of a BMC: how logs and errors name it. */
export function bmcName(target: Pick<IpmiTarget, 'host' | 'port'>): string {
  return `${target.host}:${target.port ?? DEFAULT_IPMI_PORT}`;
}

/**
 * A failed IPMI call. The message always names the BMC (host:port) and the operation; callers must
 * build `detail` from text that has already been stripped of the password.
 */
export class IpmiError extends PvcError {
  readonly bmc: string;
  readonly operation: IpmiOperation;

  constructor(code: IpmiErrorCode, bmc: string, operation: IpmiOperation, detail: string, cause?: unknown) {
    super(code, `IPMI ${operation} (BMC ${bmc}): ${detail}`, { cause, retryable: RETRYABLE[code] });
    this.bmc = bmc;
    this.operation = operation;
  }

  /** The code, typed. */
  get ipmiCode(): IpmiErrorCode {
    return this.code as IpmiErrorCode;
  }
}
