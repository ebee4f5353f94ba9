// The LinkPort contract (libs/hostnet) against the real adapter — `ip -json`, `ip link|address|route`
// and `arping -D` through Exec — in a fresh network namespace per test (root only); the fake passes
// the same suite in the unit tier.
import { before } from 'node:test';
import { createIpLinks } from '@pvc/hostnet';
import { registerLinkContract } from '@pvc/hostnet/testing';
import { sweepStaleNamespaces, TestHost } from './netns.js';

before(() => sweepStaleNamespaces());

registerLinkContract('ip and arping in a network namespace', async () => {
  const h = await TestHost.create();
  return {
    port: createIpLinks(h.exec),
    addDevice: (name) => h.addDevice(name),
    addPeer: (device, cidr) => h.addPeer(device, cidr),
    close: () => h.destroy(),
  };
});
