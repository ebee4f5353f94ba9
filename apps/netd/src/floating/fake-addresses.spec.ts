import { addressContract } from './testing/address-contract.js';
import { FakeAddresses } from './fake-addresses.js';

addressContract('fake', () => Promise.resolve({ port: new FakeAddresses(['brupstream']), device: 'brupstream', missing: 'nosuchbr0', teardown: () => Promise.resolve() }));
