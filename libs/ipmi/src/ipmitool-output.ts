/**
 * Judging `ipmitool chassis power …` results from ipmitool's real output (pure; unit tested with a
 * table of texts captured from ipmitool 1.8.19 against ipmi_sim and from ipmitool's sources).
 *
 * Success texts (stdout, one line):
 *   status → `Chassis Power is on` / `Chassis Power is off` (capital P: the original compared
 *            `Chassis power is off` and so misjudged every reboot, inventory §3.3 [bug?]; we match
 *            case-insensitively but require the whole line);
 *   off    → `Chassis Power Control: Down/Off`;   on → `Chassis Power Control: Up/On`.
 * Anything else on a zero exit is IPMI_BAD_OUTPUT; a failure is classified from stderr.
 */
import { maskSecrets } from '@pvc/runtime';
import type { ExecResult } from '@pvc/runtime';
import { IpmiError } from './ipmi.js';
import type { IpmiErrorCode, IpmiOperation, PowerState } from './ipmi.js';

const STATUS_LINE = /^chassis power is (on|off)$/i;
const CONTROL_LINE: Readonly<Record<Exclude<IpmiOperation, 'power status'>, RegExp>> = {
  'power off': /^chassis power control: down\/off$/i,
  'power on': /^chassis power control: up\/on$/i,
};

/** A known failure text: the first rule whose pattern matches a line of the output wins. */
interface FailureRule {
  code: IpmiErrorCode;
  pattern: RegExp;
  /** What the line means, prefixed to it in the error message. */
  meaning: string;
}

/**
 * Ordered: credential problems first, because ipmitool follows each of them with the generic
 * "Unable to establish IPMI v2 / RMCP+ session" that also means "no answer". The specific RAKP lines
 * are printed only with `-v`, which the adapter therefore always passes.
 */
const FAILURE_RULES: readonly FailureRule[] = [
  { code: 'IPMI_AUTH', pattern: /RAKP 2 HMAC is invalid/i, meaning: 'wrong password' },
  { code: 'IPMI_AUTH', pattern: /unauthorized name/i, meaning: 'unknown user' },
  { code: 'IPMI_AUTH', pattern: /invalid user name/i, meaning: 'unknown user' },
  { code: 'IPMI_AUTH', pattern: /invalid role|unauthorized role|insufficient privilege/i, meaning: 'user lacks the privilege' },
  { code: 'IPMI_AUTH', pattern: /invalid integrity check value/i, meaning: 'key or password refused' },
  { code: 'IPMI_AUTH', pattern: /invalid (authentication|integrity|confidentiality) algorithm/i, meaning: 'cipher suite refused' },
  { code: 'IPMI_REJECTED', pattern: /^(set|get) chassis power .* failed: /i, meaning: 'BMC refused the command' },
  { code: 'IPMI_UNREACHABLE', pattern: /unable to (get chassis power status|set chassis power control)/i, meaning: 'no answer to the command' },
  { code: 'IPMI_UNREACHABLE', pattern: /no response from remote controller/i, meaning: 'no answer' },
  { code: 'IPMI_UNREACHABLE', pattern: /insufficient resources/i, meaning: 'BMC has no free session' },
  { code: 'IPMI_UNREACHABLE', pattern: /address lookup for .* failed|could not open socket/i, meaning: 'cannot reach the address' },
  { code: 'IPMI_UNREACHABLE', pattern: /unable to establish ipmi v2 \/ rmcp\+ session/i, meaning: 'no session' },
  { code: 'IPMI_UNREACHABLE', pattern: /get auth capabilities error/i, meaning: 'no session' },
];

/** `-v` chatter that never explains a failure. */
const NOISE = /^(loading iana pen registry|running get vso capabilities|invalid completion code received: invalid command|discovered ipmb address)/i;

const MAX_DETAIL = 200;

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/^>\s*/, '').trim())
    .filter((l) => l.length > 0);
}

function clip(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

/** The code and a password-free one-line explanation of a failed (or unintelligible) run. */
export function classifyFailure(r: ExecResult, secrets: readonly string[]): { code: IpmiErrorCode; detail: string } {
  const all = lines(`${r.stderr}\n${r.stdout}`);
  for (const rule of FAILURE_RULES) {
    const hit = all.find((l) => rule.pattern.test(l));
    if (hit !== undefined) return { code: rule.code, detail: `${rule.meaning} (${clip(maskSecrets(hit, secrets))})` };
  }
  const last = all.filter((l) => !NOISE.test(l)).at(-1);
  const said = last === undefined ? 'no output' : `"${clip(maskSecrets(last, secrets))}"`;
  return { code: 'IPMI_BAD_OUTPUT', detail: `unrecognised answer (exit ${r.exitCode}): ${said}` };
}

/** The single stdout line of a successful run, or undefined. */
function onlyLine(r: ExecResult): string | undefined {
  if (r.exitCode !== 0) return undefined;
  const out = lines(r.stdout);
  return out.length === 1 ? out[0] : undefined;
}

function failure(bmc: string, op: IpmiOperation, r: ExecResult, secrets: readonly string[]): IpmiError {
  const { code, detail } = classifyFailure(r, secrets);
  return new IpmiError(code, bmc, op, detail);
}

/** The power state from `chassis power status`; throws {@link IpmiError} otherwise. */
export function parsePowerStatus(bmc: string, r: ExecResult, secrets: readonly string[] = []): PowerState {
  const m = STATUS_LINE.exec(onlyLine(r) ?? '');
  if (m?.[1] !== undefined) return m[1].toLowerCase() as PowerState;
  throw failure(bmc, 'power status', r, secrets);
}

/** Checks the answer of `chassis power off|on`; throws {@link IpmiError} unless the BMC accepted it. */
export function parsePowerControl(
  bmc: string,
  op: Exclude<IpmiOperation, 'power status'>,
  r: ExecResult,
  secrets: readonly string[] = [],
): void {
  if (CONTROL_LINE[op].test(onlyLine(r) ?? '')) return;
  throw failure(bmc, op, r, secrets);
}
