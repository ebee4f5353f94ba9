/**
 * A fencer that died holding the fence lock, on a real Zookeeper (issue 14 item 1): its session is
 * still open (as for a host that vanished without closing it), its keepalives have stopped. Another
 * coordinator's fence stack (liveness tracker, fencer, monitor; fake IPMI) breaks its lock once it
 * has seen it silent for the window, fences it and resumes the node it left dead + fence-flush —
 * long before the holder's session could expire.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '@pvc/runtime';
import { connectZk, createLock, locks, paths, type RealZkClient } from '@pvc/zk';
import { FakeIpmi } from '@pvc/ipmi';
import { LivenessTracker } from '../../../apps/keepaliled/src/fence/liveness.js';
import { Fencer } from '../../../apps/keepaliled/src/fence/fencer.js';
import { FenceMonitor } from '../../../apps/keepaliled/src/fence/monitor.js';
import type { KeepalivedEvent } from '../../../apps/keepaliled/src/model.js';
import { FakePeers, memoryLogger } from '../../../apps/keepaliled/src/testing/fakes.js';
import { heartbeats, seedBase, seedDomain, seedNode } from '../../../apps/keepaliled/src/testing/cluster.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { waitUntil } from '../../support/wait.js';

let server: ZkTestServer;
const clients: RealZkClient[] = [];
const connect = async (sessionTimeoutMs = 10_000): Promise<RealZkClient> => {
  const c = await connectZk({ hosts: ['127.0.0.1'], port: server.port, sessionTimeoutMs, spinDelayMs: 100, clock: realClock });
  clients.push(c);
  return c;
};

before(async () => {
  server = await ZkTestServer.start();
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await server.stop();
});

test('a dead fencer’s fence lock is broken after the window, not after its session timeout; both nodes are fenced', async () => {
  const writer = await connect();
  const now = realClock.now();
  await seedBase(writer, { primary: 'hv2' });
  await seedNode(writer, now, { name: 'hv1', mode: 'coordinator' });
  await seedNode(writer, now, { name: 'hv2', mode: 'coordinator', routerState: 'primary' });
  await seedNode(writer, now, { name: 'hv3', mode: 'coordinator' });
  await seedNode(writer, now, { name: 'hv4', mode: 'hypervisor', daemonState: 'dead', domainState: 'fence-flush', runningDomains: ['v4'] });
  await seedDomain(writer, { uuid: 'v4', name: 'vm4', node: 'hv4' });
  await seedDomain(writer, { uuid: 'v1', name: 'vm1', node: 'hv1' });
  // hv1 took the fence lock to fence hv4, then died: its session lives on for 60 s.
  const dead = await connect(60_000);
  assert.equal(await createLock(dead, locks.fence, { clock: realClock, identifier: 'hv1' }).acquire({ timeoutMs: 2_000 }), true);
  const beats = heartbeats(writer, realClock, ['hv1', 'hv2', 'hv3'], 1_000);
  await realClock.sleep(1_200);
  beats.silence('hv1');
  const diedAt = realClock.now();

  const zk = await connect();
  const log = memoryLogger();
  const events: KeepalivedEvent[] = [];
  const liveness = new LivenessTracker({ zk, clock: realClock, logger: log.logger, self: 'hv2', intervalMs: 1_000 });
  const settings = { intervalMs: 1_000, fenceIntervals: 3, suicideIntervals: 0, successfulFence: 'migrate' as const, failedFence: 'none' as const, ipmiPort: 623 };
  const fencer = new Fencer({
    self: 'hv2', zk, clock: realClock, logger: log.logger, events: (e) => void events.push(e), peers: new FakePeers(realClock, { name: 'hv2' }),
    ipmi: new FakeIpmi(realClock), liveness, storageEnabled: false, defaultSelector: 'mem', settings,
  });
  const monitor = new FenceMonitor({ self: 'hv2', zk, clock: realClock, logger: log.logger, events: (e) => void events.push(e), liveness, fencer, intervalMs: 1_000, fenceIntervals: 3 });
  liveness.start();
  const ac = new AbortController();
  const running = monitor.run(ac.signal);
  try {
    await waitUntil(() => events.filter((e) => e.kind === 'recovery-done').length, { what: 'both recoveries done', until: (n) => n >= 2, timeoutMs: 20_000, intervalMs: 100 });
    const tookMs = realClock.now() - diedAt;
    assert.ok(tookMs < 10_000, `both fenced ${tookMs} ms after hv1 died (its session lasts 60 s)`);
    assert.deepEqual(events.filter((e) => e.kind === 'node-dead').map((e) => e.node), ['hv1']);
    assert.ok(events.some((e) => e.kind === 'fence-start' && e.node === 'hv4' && e.resumed));
    assert.ok(log.messages(/breaking a lock/).length > 0, 'the break is logged');
    assert.equal(await writer.read(paths.domain('v4').node) !== 'hv4', true, 'vm4 moved off hv4');
    assert.equal(await writer.read(paths.domain('v1').node) !== 'hv1', true, 'vm1 moved off hv1');
  } finally {
    beats.stop();
    ac.abort();
    await running.catch(() => undefined);
    liveness.stop();
  }
});
