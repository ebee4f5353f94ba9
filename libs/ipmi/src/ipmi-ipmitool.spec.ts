import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AbortedError, createExec, createLogger, FakeExec, rejectionOf, TimeoutError } from '@pvc/runtime';
import type { ExecOptions } from '@pvc/runtime';
import { IpmiError } from './ipmi.js';
import type { IpmiTarget } from './ipmi.js';
import { createIpmitoolIpmi, ipmitoolArgs, lanTimeoutSeconds } from './ipmi-ipmitool.js';

const PASS = 'pw-Secr3t-42';
const TARGET: IpmiTarget = { host: '10.0.0.2', user: 'admin', pass: PASS };

/** A FakeExec whose ipmitool answers `stdout`/`stderr`, keeping the options it received. */
function fakeIpmitool(stdout: string, stderr = '', exitCode = 0): { exec: FakeExec; seen: ExecOptions[] } {
  const seen: ExecOptions[] = [];
  const exec = new FakeExec().on('ipmitool', (_call, opts) => {
    seen.push(opts);
    return { exitCode, stdout, stderr };
  });
  return { exec, seen };
}

const ipmiErrorOf = (p: Promise<unknown>): Promise<IpmiError> => rejectionOf(p, IpmiError);

describe('ipmitool adapter: command line', () => {
  it('runs lanplus with -C 3, bounded -N/-R, -v and -E; the password only in env and secrets', async () => {
    const { exec, seen } = fakeIpmitool('Chassis Power is on\n');
    const ipmi = createIpmitoolIpmi(exec);
    assert.equal(await ipmi.powerStatus(TARGET), 'on');
    assert.deepEqual(exec.lines(), [
      'ipmitool -v -I lanplus -C 3 -N 2 -R 1 -H 10.0.0.2 -p 623 -U admin -E chassis power status',
    ]);
    assert.ok(!exec.lines().some((l) => l.includes(PASS)), 'password on the command line');
    const opts = seen[0]!;
    assert.equal(opts.env?.['IPMI_PASSWORD'], PASS);
    assert.deepEqual(opts.secrets, [PASS]);
    assert.equal(opts.timeoutMs, 5000);
  });

  it('passes port, cipher suite, timeout and signal through; sizes -N to the timeout', async () => {
    const { exec, seen } = fakeIpmitool('Chassis Power Control: Down/Off\n');
    const ac = new AbortController();
    await createIpmitoolIpmi(exec).powerOff({ ...TARGET, port: 6230, cipherSuite: 17 }, { timeoutMs: 9000, signal: ac.signal });
    assert.deepEqual(exec.calls[0]!.args, ipmitoolArgs({ ...TARGET, port: 6230, cipherSuite: 17 }, 9000, 'power off'));
    assert.match(exec.lines()[0]!, /-C 17 -N 4 -R 1 .* -p 6230 .* chassis power off$/);
    assert.equal(seen[0]!.timeoutMs, 9000);
    assert.equal(seen[0]!.signal, ac.signal);
    assert.deepEqual([1000, 2500, 3000, 5000, 10_000].map(lanTimeoutSeconds), [1, 1, 1, 2, 4]);
  });

  it('power on checks the Up/On answer', async () => {
    const { exec } = fakeIpmitool('Chassis Power Control: Up/On\n');
    await createIpmitoolIpmi(exec).powerOn(TARGET);
    assert.deepEqual(exec.calls[0]!.args.slice(-3), ['chassis', 'power', 'on']);
    const wrong = fakeIpmitool('Chassis Power Control: Down/Off\n');
    assert.equal((await ipmiErrorOf(createIpmitoolIpmi(wrong.exec).powerOn(TARGET))).code, 'IPMI_BAD_OUTPUT');
  });
});

describe('ipmitool adapter: failures', () => {
  it('bad credentials → IPMI_AUTH naming the BMC, never the password', async () => {
    const { exec, seen } = fakeIpmitool('', `Loading IANA PEN Registry...\n> RAKP 2 HMAC is invalid\nError: Unable to establish IPMI v2 / RMCP+ session\n`, 1);
    const err = await ipmiErrorOf(createIpmitoolIpmi(exec).powerStatus(TARGET));
    assert.equal(err.code, 'IPMI_AUTH');
    assert.equal(err.retryable, false);
    assert.match(err.message, /10\.0\.0\.2:623/);
    assert.equal(seen[0]!.env?.['IPMI_PASSWORD'], PASS, 'the Exec did receive the password');
    assert.ok(!err.message.includes(PASS), err.message);
  });

  it('an Exec timeout → IPMI_UNREACHABLE; its message and cause are password-free', async () => {
    const exec = new FakeExec().on('ipmitool', (call, opts) => {
      throw new TimeoutError(`ipmitool ${call.args.join(' ')}`, opts.timeoutMs ?? 0);
    });
    const err = await ipmiErrorOf(createIpmitoolIpmi(exec).powerOff(TARGET, { timeoutMs: 3000 }));
    assert.equal(err.code, 'IPMI_UNREACHABLE');
    assert.equal(err.retryable, true);
    assert.match(err.message, /^IPMI power off \(BMC 10\.0\.0\.2:623\): no answer within 3000 ms$/);
    assert.ok(err.cause instanceof TimeoutError);
    assert.ok(!String((err.cause as Error).message).includes(PASS));
  });

  it('an abort propagates as AbortedError, not as an IPMI failure', async () => {
    const exec = new FakeExec().on('ipmitool', () => {
      throw new AbortedError('ipmitool');
    });
    await assert.rejects(createIpmitoolIpmi(exec).powerStatus(TARGET), AbortedError);
  });
});

describe('ipmitool adapter over the real Exec (a stand-in ipmitool script)', () => {
  let dir = '';
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the child gets the password from IPMI_PASSWORD; log lines and errors never show it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pvc-ipmitool-'));
    const script = join(dir, 'ipmitool');
    // Answers "on" when IPMI_PASSWORD is right; otherwise fails and echoes the password it got.
    await writeFile(
      script,
      `#!/bin/sh\nif [ "$IPMI_PASSWORD" = "${PASS}" ]; then echo "Chassis Power is on"; exit 0; fi\n` +
        `echo "> RAKP 2 HMAC is invalid (got $IPMI_PASSWORD)" >&2\necho "Error: Unable to establish IPMI v2 / RMCP+ session" >&2\nexit 1\n`,
    );
    await chmod(script, 0o755);
    const logged: string[] = [];
    const logger = createLogger({ service: 'test', debug: true, destination: { write: (s: string) => void logged.push(s) } });
    const ipmi = createIpmitoolIpmi(createExec(logger), { command: script });

    assert.equal(await ipmi.powerStatus(TARGET), 'on');
    const wrong = 'Wr0ng-pass-99';
    const err = await ipmiErrorOf(ipmi.powerStatus({ ...TARGET, pass: wrong }));
    assert.equal(err.code, 'IPMI_AUTH');
    assert.match(err.message, /wrong password/);
    assert.ok(!err.message.includes(wrong), err.message);
    assert.ok(logged.length >= 2, 'Exec logged the commands');
    for (const line of logged) assert.ok(!line.includes(PASS) && !line.includes(wrong), line);
  });
});
