import { FakeLinks } from './fake-links.js';
import { registerLinkContract } from './testing/index.js';

// The fake must behave as the kernel does for everything the contract checks (the real adapter
// passes the same suite in tests/integration/hostnet).
registerLinkContract('FakeLinks', async () => {
  const port = new FakeLinks();
  let peers = 0;
  return {
    port,
    addDevice: async (name) => void port.addDevice(name),
    addPeer: async (device, cidr) => void port.addPeer(device, cidr.split('/')[0] ?? cidr, `02:00:00:00:00:${String(++peers).padStart(2, '0')}`),
    close: async () => undefined,
  };
});
