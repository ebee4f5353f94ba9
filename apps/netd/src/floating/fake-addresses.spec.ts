import { addressContract } from './testing/address-contract.js';
import { FakeAddresses } from './fake-addresses.js';

addressContract('fake', () => {
  const port = new FakeAddresses(['brupstream']);
  return Promise.resolve({
    port,
    device: 'brupstream',
    missing: 'nosuchbr0',
    deviceMac: () => Promise.resolve(port.macOf('brupstream')),
    neighbourMac: (ip: string) => Promise.resolve(port.neighbours.get(ip)),
    teardown: () => Promise.resolve(),
  });
});
