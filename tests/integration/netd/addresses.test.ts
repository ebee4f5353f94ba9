/**
 * The real AddressPort (`ip`, `arping` through Exec) against the contract the fake keeps, inside a
 * throwaway network namespace (a veth pair, one end up). Root only; fails, naming what is
 * missing, without ip or arping.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createExec } from '@pvc/runtime';
import { createIpAddresses } from '../../../apps/netd/src/floating/ip-addresses.js';
import { addressContract } from '../../../apps/netd/src/floating/testing/address-contract.js';
import { addNetns, deleteNetns, ip } from './nft-netns.js';

const NS = `pvc-addr-${process.pid}`;

addressContract('ip + arping in a network namespace', async () => {
  assert.equal(process.getuid?.(), 0, 'needs root (network namespaces)');
  const arping = spawnSync('arping', ['-V'], { encoding: 'utf8' });
  assert.equal(arping.error, undefined, `arping is needed (Debian package iputils-arping): ${arping.error?.message ?? ''}`);
  addNetns(NS);
  ip('-n', NS, 'link', 'add', 'fl0', 'type', 'veth', 'peer', 'name', 'fl1');
  ip('-n', NS, 'link', 'set', 'fl0', 'up');
  ip('-n', NS, 'link', 'set', 'fl1', 'up');
  return {
    port: createIpAddresses({ exec: createExec(), prefix: ['ip', 'netns', 'exec', NS] }),
    device: 'fl0',
    missing: 'nosuchbr0',
    teardown: () => Promise.resolve(deleteNetns(NS)),
  };
});
