import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactedConfig } from './redact.js';
import { sampleDoc } from './testing/sample.js';
import { validateConfig } from './validate.js';

test('redactedConfig replaces every password and leaves the original intact', () => {
  const config = validateConfig(sampleDoc());
  const printable = redactedConfig(config);
  assert.equal(printable.system.fencing.ipmi.pass, '[redacted]');
  assert.equal(printable.coordinator?.dns.database.pass, '[redacted]');
  assert.equal(printable.coordinator?.metadata.database.pass, '[redacted]');
  const text = JSON.stringify(printable);
  for (const secret of ['Passw0rd', 'pvcdnsPassw0rd', 'pvcapiPassw0rd']) assert.ok(!text.includes(secret), secret);
  assert.equal(config.system.fencing.ipmi.pass, 'Passw0rd');
  assert.equal(printable.system.fencing.ipmi.user, 'admin');
  assert.deepEqual(printable.cluster.coordinators, config.cluster.coordinators);
  assert.equal(printable.system.configuration.networking?.cluster.resolved?.cidr, '10.255.0.1/24');
});
