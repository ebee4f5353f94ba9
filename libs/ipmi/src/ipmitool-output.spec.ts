import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecResult } from '@pvc/runtime';
import { IpmiError } from './ipmi.js';
import type { IpmiErrorCode } from './ipmi.js';
import { classifyFailure, parsePowerControl, parsePowerStatus } from './ipmitool-output.js';

const BMC = '10.0.0.2:623';
/** What `ipmitool -v` prints to stderr on every successful lanplus call against ipmi_sim. */
const V_CHATTER =
  'Loading IANA PEN Registry...\nRunning Get VSO Capabilities my_addr 0x20, transit 0, target 0x20\n' +
  'Invalid completion code received: Invalid command\nDiscovered IPMB address 0x0\n';
const NO_SESSION = 'Error: Unable to establish IPMI v2 / RMCP+ session\n';

const ok = (stdout: string, stderr = V_CHATTER): ExecResult => ({ exitCode: 0, stdout, stderr });
const bad = (stderr: string, exitCode = 1, stdout = ''): ExecResult => ({ exitCode, stdout, stderr });

function codeOf(fn: () => unknown): IpmiErrorCode {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof IpmiError, `expected IpmiError, got ${String(err)}`);
    assert.match(err.message, /BMC 10\.0\.0\.2:623/);
    return err.ipmiCode;
  }
  assert.fail('expected a throw');
}

describe('parsePowerStatus (texts from ipmitool 1.8.19)', () => {
  const table: [string, ExecResult, 'on' | 'off' | IpmiErrorCode][] = [
    ['on', ok('Chassis Power is on\n'), 'on'],
    ['off', ok('Chassis Power is off\n'), 'off'],
    ['lower-case p (what the original expected) still parses', ok('Chassis power is off\n'), 'off'],
    ['upper-case state', ok('CHASSIS POWER IS ON\n'), 'on'],
    ['no -v chatter', ok('Chassis Power is off\n', ''), 'off'],
    ['bad password (-v)', bad(`Loading IANA PEN Registry...\n> RAKP 2 HMAC is invalid\n${NO_SESSION}`), 'IPMI_AUTH'],
    ['unknown user (-v)', bad(`Loading IANA PEN Registry...\nRAKP 2 message indicates an error : unauthorized name\n${NO_SESSION}`), 'IPMI_AUTH'],
    ['unknown user (IPMI 1.5 lan)', bad('Get Session Challenge command failed\nInvalid user name\n'), 'IPMI_AUTH'],
    ['cipher suite refused', bad(`Error in open session response message : invalid authentication algorithm\n\n${NO_SESSION}`), 'IPMI_AUTH'],
    ['no session (timeout, closed port, or bad password without -v)', bad(NO_SESSION), 'IPMI_UNREACHABLE'],
    ['no answer to Get Auth Capabilities (-v)', bad(`Loading IANA PEN Registry...\nGet Auth Capabilities error\nError issuing Get Channel Authentication Capabilities request\n${NO_SESSION}`), 'IPMI_UNREACHABLE'],
    ['name lookup failed', bad(`Address lookup for nonexistent.invalid failed\nCould not open socket!\n${NO_SESSION}`), 'IPMI_UNREACHABLE'],
    ['session dropped mid-command', bad('Unable to get Chassis Power Status\n'), 'IPMI_UNREACHABLE'],
    ['BMC refuses with a completion code', bad('Get Chassis Power Status failed: Node busy\n'), 'IPMI_REJECTED'],
    ['state neither on nor off', ok('Chassis Power is unknown\n'), 'IPMI_BAD_OUTPUT'],
    ['trailing words', ok('Chassis Power is on (standby)\n'), 'IPMI_BAD_OUTPUT'],
    ['two answers', ok('Chassis Power is on\nChassis Power is off\n'), 'IPMI_BAD_OUTPUT'],
    ['nothing at all', ok(''), 'IPMI_BAD_OUTPUT'],
    ['old ipmitool error on stdout with exit 0', ok('error in Chassis Status Command\n'), 'IPMI_BAD_OUTPUT'],
    ['a good line but a failing exit', bad('', 1, 'Chassis Power is on\n'), 'IPMI_BAD_OUTPUT'],
    ['ipmitool missing', bad('ipmitool: command not found\n', 127), 'IPMI_BAD_OUTPUT'],
  ];
  for (const [name, result, want] of table) {
    it(`${name} → ${want}`, () => {
      if (want === 'on' || want === 'off') assert.equal(parsePowerStatus(BMC, result), want);
      else assert.equal(codeOf(() => parsePowerStatus(BMC, result)), want);
    });
  }
});

describe('parsePowerControl', () => {
  it('accepts exactly the answer of the command asked', () => {
    parsePowerControl(BMC, 'power off', ok('Chassis Power Control: Down/Off\n'));
    parsePowerControl(BMC, 'power on', ok('Chassis Power Control: Up/On\n'));
    parsePowerControl(BMC, 'power on', ok('chassis power control: up/on\n'));
    assert.equal(codeOf(() => parsePowerControl(BMC, 'power off', ok('Chassis Power Control: Up/On\n'))), 'IPMI_BAD_OUTPUT');
    assert.equal(codeOf(() => parsePowerControl(BMC, 'power on', ok('Chassis Power Control: Cycle\n'))), 'IPMI_BAD_OUTPUT');
  });

  it('classifies control failures', () => {
    const table: [string, IpmiErrorCode][] = [
      ['Set Chassis Power Control to Down/Off failed: Unspecified error', 'IPMI_REJECTED'],
      ['Set Chassis Power Control to Down/Off failed: Insufficient privilege level', 'IPMI_AUTH'],
      ['Unable to set Chassis Power Control to Down/Off', 'IPMI_UNREACHABLE'],
      ['RAKP 2 message indicates an error : unauthorized role or privilege level requested', 'IPMI_AUTH'],
      ['RAKP 2 message indicates an error : insufficient resources to create a session', 'IPMI_UNREACHABLE'],
    ];
    for (const [stderr, want] of table) {
      assert.equal(codeOf(() => parsePowerControl(BMC, 'power off', bad(`${stderr}\n`))), want, stderr);
    }
  });
});

describe('classifyFailure', () => {
  it('names the line that explains the failure, without -v chatter', () => {
    const r = classifyFailure(bad(`Loading IANA PEN Registry...\n> RAKP 2 HMAC is invalid\n${NO_SESSION}`), []);
    assert.deepEqual(r, { code: 'IPMI_AUTH', detail: 'wrong password (RAKP 2 HMAC is invalid)' });
    const u = classifyFailure(bad(`${V_CHATTER}something new\n`, 2), []);
    assert.deepEqual(u, { code: 'IPMI_BAD_OUTPUT', detail: 'unrecognised answer (exit 2): "something new"' });
  });

  it('masks the password even if a tool echoes it', () => {
    const r = classifyFailure(bad('Set Chassis Power Control to Down/Off failed: bad key s3cr3t!\n'), ['s3cr3t!']);
    assert.equal(r.code, 'IPMI_REJECTED');
    assert.ok(!r.detail.includes('s3cr3t!'), r.detail);
    assert.match(r.detail, /\*\*\*/);
    const u = classifyFailure(bad('weird: s3cr3t!\n'), ['s3cr3t!']);
    assert.ok(!u.detail.includes('s3cr3t!'), u.detail);
  });
});
