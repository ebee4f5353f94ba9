// The node log end to end: two built services of one node (netd, cephd with storage) write their
// lines to /logs/<node>/messages in a real ZooKeeper, which is what `pvc node log <node>` reads.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { realClock } from '@pvc/runtime';
import { connectZk, paths, type RealZkClient } from '@pvc/zk';
import { waitFor } from '../../cluster/harness/index.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { startService, type ServiceProcess } from './service-process.js';

describe('node log in ZooKeeper (built dist/main.js of netd and cephd)', () => {
  let zk: ZkTestServer;
  let admin: RealZkClient;
  const procs: ServiceProcess[] = [];
  const key = paths.logs.node('hv1').messages;
  const lines = async (): Promise<string[]> => ((await admin.read(key)) ?? '').split('\n').filter((l) => l !== '');

  before(async () => {
    zk = await ZkTestServer.start();
    admin = await connectZk({ hosts: ['127.0.0.1'], port: zk.port, clock: realClock });
    const common: [string, unknown][] = [
      ['pvc.cluster.coordinators', ['localhost']],
      ['pvc.database', { zookeeper: { port: zk.port } }],
      ['pvc.system.configuration.logging.node_log_lines', 40],
    ];
    procs.push(await startService('netd', common));
    procs.push(await startService('cephd', [...common, ['pvc.functions.enable_storage', true]]));
  });

  after(async () => {
    for (const p of procs) await p.cleanup();
    await admin?.close();
    await zk?.destroy();
  });

  test('both services append human lines prefixed with their name, from start-up on', async (t) => {
    // The sinks append in batches: wait for the lines checked below, not just for any line.
    await waitUntil(lines, {
      what: "both services' start-up lines in the node log",
      until: (got) => got.some((l) => /^netd: \S+ INFO  netd started /.test(l)) && got.some((l) => /^cephd: \S+ INFO  cephd started /.test(l)),
      intervalMs: 100,
    });
    const got = await lines();
    assert.ok(got.some((l) => /^netd: \S+ INFO  netd started /.test(l)), got.join('\n'));
    assert.ok(got.some((l) => /^cephd: \S+ INFO  cephd started /.test(l)), got.join('\n'));
    assert.ok(got.every((l) => /^(netd|cephd): \S+ (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) /.test(l)), got.join('\n'));
    assert.ok(got.every((l) => !l.includes('\x1b') && !l.includes('{"level"')), 'no colours, no JSON');
    assert.equal(await admin.read(paths.logs.node('hv1').root), '');
    t.diagnostic(got.slice(0, 4).join('\n'));
  });

  test('ZooKeeper down and back: lines logged meanwhile arrive; the key keeps node_log_lines lines at most', async () => {
    await zk.stop();
    await realClock.sleep(1500);
    await zk.start();
    await admin.waitConnected({ timeoutMs: 15_000 });
    // netd and cephd log their reconnection while the sink still buffers; both lines must arrive.
    await waitFor('reconnection lines in the node log', 20_000, async () => {
      const got = await lines();
      return ['netd', 'cephd'].every((s) => got.some((l) => l.startsWith(`${s}: `) && l.includes('Zookeeper connection lost'))) ? true : undefined;
    }, 200);
    assert.ok((await lines()).length <= 40);
    for (const p of procs) assert.equal(await p.stop(), 0, p.output());
    assert.deepEqual(await admin.children(key), [], 'no lock contender left behind');
  });
});
