import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, rejectionOf } from '@pvc/runtime';
import { PrimaryRole, PrimaryRoleError, type PrimaryDuty } from './primary-role.js';

function setup(duties: PrimaryDuty[] = []): { role: PrimaryRole; logs: () => { msg: string; reason?: string }[] } {
  const lines: string[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void lines.push(s) } });
  const role = new PrimaryRole({ service: 'netd', logger, duties });
  return { role, logs: () => lines.map((l) => JSON.parse(l) as { msg: string; reason?: string }) };
}

function duty(name: string, events: string[], fail: { start?: boolean; stop?: boolean } = {}): PrimaryDuty {
  return {
    name,
    start: async () => {
      events.push(`start ${name}`);
      if (fail.start) throw new Error(`${name} cannot start`);
    },
    stop: async () => {
      events.push(`stop ${name}`);
      if (fail.stop) throw new Error(`${name} cannot stop`);
    },
  };
}

test('secondary -> primary -> secondary, each transition logged once with its reason; repeats are no-ops', async () => {
  const { role, logs } = setup();
  assert.equal(role.current, 'secondary');
  assert.equal(await role.set(false, 'startup'), false);
  assert.deepEqual(logs(), [], 'asking for the role in force logs nothing');
  assert.equal(await role.set(true, 'takeover'), true);
  assert.equal(await role.set(true, 'takeover again'), true);
  assert.equal(role.current, 'primary');
  assert.equal(await role.set(false, 'relinquish: primary_node is hv2'), false);
  assert.equal(role.current, 'secondary');
  assert.deepEqual(
    logs().map((l) => [l.msg, l.reason]),
    [
      ['primary role: primary', 'takeover'],
      ['primary role: secondary', 'relinquish: primary_node is hv2'],
    ],
  );
});

test('duties start in order and stop in reverse; concurrent calls are serialised', async () => {
  const events: string[] = [];
  const { role } = setup([duty('a', events), duty('b', events)]);
  const results = await Promise.all([role.set(true, 'x'), role.set(false, 'y'), role.set(true, 'z')]);
  assert.deepEqual(results, [true, false, true]);
  assert.deepEqual(events, ['start a', 'start b', 'stop b', 'stop a', 'start a', 'start b']);
  assert.deepEqual(role.dutyNames, ['a', 'b']);
});

test('a duty failing to start: started ones are stopped again, role stays secondary, error names the duty', async () => {
  const events: string[] = [];
  const { role } = setup([duty('a', events), duty('b', events, { start: true }), duty('c', events)]);
  const err = await rejectionOf(role.set(true, 'takeover'), PrimaryRoleError);
  assert.equal(err.code, 'DUTY_START_FAILED');
  assert.match(err.message, /netd: primary duty b failed to start: b cannot start/);
  assert.deepEqual(events, ['start a', 'start b', 'stop a']);
  assert.equal(role.current, 'secondary');
  assert.equal(role.isPrimary, false);
  // The role machine is still usable afterwards.
  await assert.rejects(role.set(true, 'retry'), PrimaryRoleError);
});

test('a duty failing to stop: every duty is still stopped, role becomes secondary, the call rejects naming it', async () => {
  const events: string[] = [];
  const { role } = setup([duty('a', events), duty('b', events, { stop: true })]);
  await role.set(true, 'takeover');
  const err = await rejectionOf(role.set(false, 'relinquish'), PrimaryRoleError);
  assert.equal(err.code, 'DUTY_STOP_FAILED');
  assert.match(err.message, /b: b cannot stop/);
  assert.deepEqual(events, ['start a', 'start b', 'stop b', 'stop a']);
  assert.equal(role.current, 'secondary');
  assert.equal(await role.set(false, 'again'), false);
});
