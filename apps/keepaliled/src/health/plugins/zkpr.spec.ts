import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePluginContext } from '../fake-context.js';
import plugin, { parseSrvr } from './zkpr.js';

const SRVR = [
  'Zookeeper version: 3.8.0-debian--1, built on 2023-01-01 00:00 UTC',
  'Latency min/avg/max: 0/0.5/3',
  'Received: 10',
  'Sent: 9',
  'Connections: 2',
  'Outstanding: 0',
  'Zxid: 0x10000002a',
  'Mode: follower',
  'Node count: 42',
  '',
].join('\n');

const answering = (reply: string) => {
  const seen: string[] = [];
  const tcp = (host: string, port: number, req: string): Promise<string> => {
    seen.push(`${host}:${port} ${req}`);
    return Promise.resolve(reply);
  };
  return { seen, tcp };
};

describe('zkpr (ZooKeeper) plugin', () => {
  it('is named as the original\'s plugin (part of fault IDs and monitoring_plugins)', () => {
    assert.equal(plugin.name, 'zkpr');
  });

  it('healthy: srvr to <node>:<port> reports the mode', async () => {
    const { seen, tcp } = answering(SRVR);
    const r = await plugin.run(fakePluginContext({ tcp }));
    assert.deepEqual(seen, ['pvchv1:2181 srvr']);
    assert.equal(r.delta, 0);
    assert.equal(r.message, 'ZooKeeper at pvchv1:2181 is serving (follower)');
    assert.deepEqual(r.data, { target: 'pvchv1:2181', version: '3.8.0-debian--1', mode: 'follower', nodeCount: 42 });
  });

  it('unhealthy: refused or not serving takes 50', async () => {
    let r = await plugin.run(fakePluginContext());
    assert.equal(r.delta, 50);
    assert.match(r.message, /unreachable: connect ECONNREFUSED/);
    r = await plugin.run(fakePluginContext({ tcp: answering('This ZooKeeper instance is not currently serving requests\n').tcp }));
    assert.equal(r.delta, 50);
    assert.match(r.message, /not serving requests/);
  });

  it('broken: an empty or foreign reply takes 50; a non-whitelisted srvr is still an answer', async () => {
    assert.equal((await plugin.run(fakePluginContext({ tcp: answering('').tcp }))).delta, 50);
    const r = await plugin.run(fakePluginContext({ tcp: answering('HTTP/1.1 400 Bad Request\r\n').tcp }));
    assert.equal(r.delta, 50);
    assert.match(r.message, /unexpected reply/);
    const wl = await plugin.run(fakePluginContext({ tcp: answering('srvr is not executed because it is not in the whitelist.\n').tcp }));
    assert.equal(wl.delta, 0);
  });

  it('setup: coordinators only', async () => {
    assert.match(String(await plugin.setup?.(fakePluginContext({ isCoordinator: false }))), /not a coordinator/);
    assert.equal(await plugin.setup?.(fakePluginContext({ isCoordinator: true })), undefined);
    assert.deepEqual(parseSrvr('Mode: standalone'), { mode: 'standalone' });
  });
});
