import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KEEPALIVED_SESSION_TIMEOUT_MS, ZK_SERVER_TIMING, zooCfgTimingLines } from './server-settings.js';

const shipped = fileURLToPath(new URL('../../../deploy/zookeeper/zoo.cfg', import.meta.url));

test('the shipped zoo.cfg carries exactly the timing the code is built for', () => {
  const lines = readFileSync(shipped, 'utf8').split('\n').filter((l) => /^(tickTime|initLimit|syncLimit|cnxTimeout|fastleader\.maxNotificationInterval)=/.test(l));
  assert.deepEqual(lines, zooCfgTimingLines());
});

test("keepaliled's session timeout is one a server with this timing grants (2 to 20 ticks)", () => {
  assert.ok(KEEPALIVED_SESSION_TIMEOUT_MS >= 2 * ZK_SERVER_TIMING.tickTimeMs);
  assert.ok(KEEPALIVED_SESSION_TIMEOUT_MS <= 20 * ZK_SERVER_TIMING.tickTimeMs);
});
