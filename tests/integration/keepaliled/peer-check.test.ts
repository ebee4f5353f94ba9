/**
 * The suicide peer check end to end on one host (issue 14 item 5): two coordinators' witness
 * servers on real gRPC over TCP (127.0.0.2 and 127.0.0.3, each bound to its own address only), a
 * third coordinator asking them with the real client, and every answer built from a real ZooKeeper:
 * the keepaliled session's state (a real client) and the `srvr` probe of the server (real TCP).
 * Serving → not global; stopped → all three cut off, global; started again → not global.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RpcBindError } from '@pvc/rpc';
import { realClock, silentLogger } from '@pvc/runtime';
import { connectZk, type RealZkClient } from '@pvc/zk';
import { createGrpcWitnessEndpoint, GrpcWitnessPeers } from '../../../apps/keepaliled/src/host/witness-grpc.js';
import { srvrProbe } from '../../../apps/keepaliled/src/host/zk-srvr.js';
import type { LocalZkServer, ZkReach } from '../../../apps/keepaliled/src/ports.js';
import { localReach } from '../../../apps/keepaliled/src/witness/local-view.js';
import { PeerCheck } from '../../../apps/keepaliled/src/witness/peer-check.js';
import { WitnessServer } from '../../../apps/keepaliled/src/witness/serve.js';
import type { OutageVerdict } from '../../../apps/keepaliled/src/witness/verdict.js';
import { freePort } from '../../support/ports.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';

const ADDRESS: Record<string, string> = { hv1: '127.0.0.2', hv2: '127.0.0.3' };

describe('suicide peer check: real gRPC on TCP, real ZooKeeper', () => {
  let zkServer: ZkTestServer;
  let zk: RealZkClient;
  let probe: LocalZkServer;
  let port: number;
  const shutdown = new AbortController();
  const servers: Promise<void>[] = [];

  const reachOf = (node: string) => (signal: AbortSignal): Promise<ZkReach> =>
    localReach({ node, sessionConnected: () => zk.state === 'connected', server: probe, silentForMs: () => 4_242 }, signal);
  const check = (): Promise<OutageVerdict> =>
    new PeerCheck({
      self: 'hv3', coordinators: ['hv1', 'hv2', 'hv3'], clock: realClock, askBoundMs: 2_000,
      peers: new GrpcWitnessPeers(port, (c) => ADDRESS[c] ?? c), local: reachOf('hv3'),
    }).check(shutdown.signal);

  before(async () => {
    zkServer = await ZkTestServer.start();
    zk = await connectZk({ hosts: ['127.0.0.1'], port: zkServer.port, sessionTimeoutMs: 4_000, spinDelayMs: 100, clock: realClock });
    probe = srvrProbe({ host: '127.0.0.1', port: zkServer.port });
    port = await freePort();
    for (const node of ['hv1', 'hv2']) {
      const endpoint = createGrpcWitnessEndpoint({ node, port, logger: silentLogger(), lookup: () => Promise.resolve([ADDRESS[node] ?? '']) });
      servers.push(new WitnessServer({ endpoint, answer: reachOf(node), clock: realClock, logger: silentLogger() }).run(shutdown.signal));
    }
  });

  after(async () => {
    shutdown.abort();
    await Promise.all(servers);
    await zk.close();
    await zkServer.destroy();
  });

  it('srvr through a real socket: serving while the server runs, not serving (refused) once stopped', async () => {
    // Right after `imok` a fresh server can still say "not currently serving requests".
    const up = await waitUntil(() => probe.probe({ timeoutMs: 1_000 }), { what: 'the server serving', until: (p) => p.state === 'serving' });
    assert.deepEqual(up, { state: 'serving', detail: 'mode standalone' });
    await zkServer.stop();
    assert.deepEqual(await probe.probe({ timeoutMs: 1_000 }), { state: 'not-serving', detail: 'connection refused (no server listening)' });
    await zkServer.start();
    await waitUntil(() => probe.probe({ timeoutMs: 1_000 }), { what: 'the server serving again', until: (p) => p.state === 'serving' });
  });

  it('Zookeeper serving: the coordinators answer over TCP that they reach it — not global', async () => {
    await zk.waitConnected({ timeoutMs: 10_000 });
    const v = await waitUntil(check, { what: 'both witnesses answering', until: (x) => x.answers.every((a) => /reaches Zookeeper/.test(a)) });
    assert.equal(v.global, false);
    assert.deepEqual(v.answers, ['hv1 reaches Zookeeper', 'hv2 reaches Zookeeper', 'hv3 (self) reaches Zookeeper']);
  });

  it('Zookeeper stopped: every coordinator cut off — a global outage; started again — not global', async () => {
    await zkServer.stop();
    const down = await waitUntil(check, { what: 'a global verdict', until: (x) => x.global });
    assert.deepEqual(down.confirmed, ['hv1', 'hv2', 'hv3']);
    assert.equal(down.answers[0], 'hv1 cut off (connection refused (no server listening))');
    await zkServer.start();
    const back = await waitUntil(check, { what: 'the outage over', until: (x) => !x.global && x.confirmed.length === 0, timeoutMs: 20_000 });
    assert.equal(back.global, false);
  });

  it('each witness listens on its own address only; nothing on 127.0.0.1', async () => {
    const peers = new GrpcWitnessPeers(port, () => '127.0.0.1');
    await assert.rejects(peers.ask('hv1', { deadlineMs: 1_000 }), /getZkReach/);
    const direct = await new GrpcWitnessPeers(port).ask('127.0.0.2', { deadlineMs: 2_000 });
    assert.equal(direct.node, 'hv1');
    assert.equal(direct.msSinceKeepalive, 4_242);
  });

  it('a node name resolving to a wildcard address is refused: the witness never listens on every interface', async () => {
    const endpoint = createGrpcWitnessEndpoint({ node: 'hv9', port, logger: silentLogger(), lookup: () => Promise.resolve(['0.0.0.0']) });
    await assert.rejects(endpoint.serve(reachOf('hv9')), (err: unknown) => err instanceof RpcBindError && /wildcard/.test(err.message));
  });
});
