import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '@pvc/config';
import { mutate, type Edit } from '@pvc/config/testing';
import { VirtualClock } from '@pvc/runtime';
import { clusterKeys, paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { primaryConfigKeys } from './config-keys.js';
import { PrimaryElection } from './election.js';
import { FakePeers, memoryLogger, settle } from '../testing/fakes.js';
import { seedBase, seedNode } from '../testing/cluster.js';

const UPSTREAM = ['pvc.cluster.networks.upstream.floating_ip', '10.0.0.254/24'] as const;
const UPSTREAM_NET = ['pvc.cluster.networks.upstream.network', '10.0.0.0/24'] as const;
const UPSTREAM_GW = ['pvc.cluster.networks.upstream.gateway', '10.0.0.1'] as const;
const config = (...edits: Edit[]) => validateConfig(mutate(UPSTREAM_NET, UPSTREAM, UPSTREAM_GW, ...edits));

test('networking on: upstream_ip is the floating address with its prefix, as the original writes it', () => {
  assert.deepEqual(primaryConfigKeys(config()), [
    [clusterKeys.migrationTargetSelector.path, 'mem'],
    [clusterKeys.upstreamIp.path, '10.0.0.254/24'],
  ]);
});

test('networking off: no upstream_ip is written, even when the networks are still configured', () => {
  const c = config(['pvc.functions.enable_networking', false]);
  assert.equal(c.cluster.networks?.upstream.floating_ip, '10.0.0.254/24', 'the test keeps the networks in the file');
  assert.deepEqual(primaryConfigKeys(c), [[clusterKeys.migrationTargetSelector.path, 'mem']]);
});

test('the cluster selector is the configured one', () => {
  assert.deepEqual(primaryConfigKeys(config(['pvc.system.migration.target_selector', 'memprov']))[0], [clusterKeys.migrationTargetSelector.path, 'memprov']);
});

test('a coordinator that becomes primary writes /config/upstream_ip with the prefix (a stale prefix-less value is replaced)', async () => {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const writer = await server.connect();
  await seedBase(writer);
  await seedNode(writer, clock.now(), { name: 'hv1', mode: 'coordinator' });
  await writer.write([[paths.config.upstreamIp, '10.0.0.254']]);
  const zk = await server.connect();
  const cfg = config();
  const election = new PrimaryElection({
    self: 'hv1', coordinators: ['hv1'], zk, clock, logger: memoryLogger().logger, events: () => undefined,
    peers: new FakePeers(clock, { name: 'hv1' }), primaryKeys: () => primaryConfigKeys(cfg), mayContend: () => true,
  });
  const ac = new AbortController();
  const running = election.run(ac.signal);
  await clock.advance(5_000);
  assert.equal(election.routerState, 'primary');
  assert.equal(await writer.read(paths.config.upstreamIp), '10.0.0.254/24');
  ac.abort();
  await settle(clock, running.catch(() => undefined));
});
