import { realClock } from '@pvc/runtime';
import { registerZkContract } from './contract.js';
import { FakeZkServer } from './fake-server.js';

// The contract suite against the in-memory fake (real time: the fake answers on microtasks, so
// the suite's few real waits stay short).
registerZkContract('fake', async () => {
  const server = new FakeZkServer({ clock: realClock });
  return {
    clock: realClock,
    connect: (opts) => server.connect({ sessionTimeoutMs: opts?.sessionTimeoutMs ?? 4000 }),
    expireSession: async (client) => server.expireSession(client),
    close: async () => undefined,
  };
});
