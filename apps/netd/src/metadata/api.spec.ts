import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PrimaryRole } from '@pvc/rpc';
import { captureLogger, VirtualClock } from '@pvc/runtime';
import { FakeAddresses } from '../floating/fake-addresses.js';
import { netdPrimaryDuties } from '../duties.js';
import { MetadataApi } from './api.js';
import { metadataApiDuty, metadataIpDuty, removeMetadataIpLeftover } from './duties.js';
import { FakeUserData } from './fake-user-data.js';
import { GuardedUserData } from './guarded-user-data.js';
import type { HttpListener } from './http-server.js';

class FakeListener implements HttpListener {
  failures = 0;
  listening = false;
  readonly calls: string[] = [];
  listen(): Promise<void> {
    this.calls.push('listen');
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('listen EADDRNOTAVAIL: address not available 169.254.169.254:80'));
    }
    this.listening = true;
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.calls.push('close');
    this.listening = false;
    return Promise.resolve();
  }
}

function rig() {
  const clock = new VirtualClock(0);
  const { logger, lines } = captureLogger();
  const listener = new FakeListener();
  const db = new FakeUserData();
  const api = new MetadataApi({ listener, userData: new GuardedUserData({ source: db, clock, logger }), clock, logger, where: '169.254.169.254:80', retry: { firstMs: 1_000, maxMs: 8_000 } });
  const addresses = new FakeAddresses(['lo']);
  return { clock, lines, listener, db, api, addresses, logger };
}

describe('metadata duties', () => {
  it('takeover: floating addresses, then metadata-ip (phase E), metadata-api (phase G, before dnsmasq), client networks, DNS aggregator; relinquish in reverse', async () => {
    const { api, addresses, logger, listener } = rig();
    const order: string[] = [];
    const duties = netdPrimaryDuties([], { addresses, logger }, undefined, undefined, { ip: metadataIpDuty({ addresses, logger }), api: metadataApiDuty(api) });
    assert.deepEqual(duties.map((d) => d.name), ['metadata-ip', 'metadata-api']);
    const role = new PrimaryRole({ service: 'netd', logger, duties: duties.map((d) => ({ name: d.name, start: async () => { order.push(`+${d.name}`); await d.start(); }, stop: async () => { order.push(`-${d.name}`); await d.stop(); } })) });
    await role.set(true, 'takeover');
    assert.deepEqual(addresses.devices.get('lo'), ['169.254.169.254/32']);
    assert.equal(addresses.ops.some((o) => o.op === 'announce'), false, 'no gratuitous ARP on lo');
    assert.equal(listener.listening, true);
    assert.equal(api.current, 'serving');
    await role.set(false, 'relinquish');
    assert.deepEqual(order, ['+metadata-ip', '+metadata-api', '-metadata-api', '-metadata-ip']);
    assert.deepEqual(addresses.devices.get('lo'), []);
    assert.equal(listener.listening, false);
  });

  it('an address that cannot be bound does not fail the takeover: one error line, retried with backoff until it binds; stop ends the retries', async () => {
    const { clock, api, listener, lines } = rig();
    listener.failures = 2;
    await api.start();
    assert.equal(api.current, 'binding');
    assert.equal(lines.filter((l) => l.level === 50 && /cannot listen at 169\.254\.169\.254:80/.test(String(l.msg))).length, 1);
    await clock.advance(1_000);
    assert.equal(api.current, 'binding');
    await clock.advance(2_000);
    assert.equal(api.current, 'serving');
    assert.deepEqual(listener.calls, ['listen', 'listen', 'listen']);
    await api.stop();
    listener.failures = 100;
    await api.start();
    await api.stop();
    await clock.advance(60_000);
    assert.deepEqual(listener.calls.slice(3), ['close', 'listen', 'close'], 'no listen after stop');
  });

  it('a metadata address left on lo from before is removed at start; none there: nothing done', async () => {
    const { addresses, logger } = rig();
    assert.equal(await removeMetadataIpLeftover({ addresses, logger }), false);
    await addresses.add('169.254.169.254/32', 'lo');
    assert.equal(await removeMetadataIpLeftover({ addresses, logger }), true);
    assert.deepEqual(addresses.devices.get('lo'), []);
  });
});
