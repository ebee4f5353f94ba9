/**
 * The real AddressPort (`ip`, `arping` through Exec) against the contract the fake keeps, inside a
 * throwaway network namespace: a veth pair whose other end is a neighbour in a second namespace,
 * holding a stale ARP entry for the floating address. Root only; fails, naming what is missing,
 * without ip or arping.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createExec } from '@pvc/runtime';
import { createIpAddresses } from '../../../apps/netd/src/floating/ip-addresses.js';
import { addressContract } from '../../../apps/netd/src/floating/testing/address-contract.js';
import { addNetns, deleteNetns, ip } from './nft-netns.js';

const NS = `pvc-addr-${process.pid}`;
const PEER = `pvc-addrp-${process.pid}`;

const json = <T>(out: string): T => JSON.parse(out || '[]') as T;

addressContract('ip + arping in a network namespace', async () => {
  assert.equal(process.getuid?.(), 0, 'needs root (network namespaces)');
  const arping = spawnSync('arping', ['-V'], { encoding: 'utf8' });
  assert.equal(arping.error, undefined, `arping is needed (Debian package iputils-arping): ${arping.error?.message ?? ''}`);
  addNetns(NS);
  addNetns(PEER);
  ip('-n', NS, 'link', 'add', 'fl0', 'type', 'veth', 'peer', 'name', 'fl1', 'netns', PEER);
  ip('-n', NS, 'link', 'set', 'fl0', 'up');
  ip('-n', PEER, 'address', 'add', '192.0.2.10/24', 'dev', 'fl1');
  ip('-n', PEER, 'link', 'set', 'fl1', 'up');
  ip('-n', PEER, 'neigh', 'replace', '192.0.2.254', 'lladdr', '02:00:5e:00:00:99', 'dev', 'fl1', 'nud', 'stale');
  return {
    port: createIpAddresses({ exec: createExec(), prefix: ['ip', 'netns', 'exec', NS] }),
    device: 'fl0',
    missing: 'nosuchbr0',
    deviceMac: () => Promise.resolve(json<{ address: string }[]>(ip('-n', NS, '-json', 'link', 'show', 'fl0'))[0]!.address),
    neighbourMac: (addr: string) =>
      Promise.resolve(json<{ lladdr?: string }[]>(ip('-n', PEER, '-json', 'neigh', 'show', addr, 'dev', 'fl1'))[0]?.lladdr),
    teardown: () => {
      deleteNetns(NS);
      deleteNetns(PEER);
      return Promise.resolve();
    },
  };
});
