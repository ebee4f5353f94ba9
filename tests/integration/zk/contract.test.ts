// The ZkClient contract suite against a real ZooKeeper 3.8 server (the same tests the fake passes).
import { realClock } from '@pvc/runtime';
import { connectZk, type RealZkClient } from '@pvc/zk';
import { expireRealSession, registerZkContract } from '@pvc/zk/testing';
import { ZkTestServer } from '../../support/zk-server.js';

registerZkContract('real ZooKeeper', async () => {
  const server = await ZkTestServer.start();
  return {
    clock: realClock,
    connect: (opts) =>
      connectZk({ hosts: ['127.0.0.1'], port: server.port, sessionTimeoutMs: opts?.sessionTimeoutMs ?? 4000, spinDelayMs: 100, clock: realClock }),
    expireSession: (client) => expireRealSession(client as RealZkClient, realClock),
    close: () => server.destroy(),
  };
});
