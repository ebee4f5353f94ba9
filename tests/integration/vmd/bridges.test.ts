/**
 * The real HostBridges (`ip -json link show dev` through Exec) against the contract the fake keeps,
 * inside a throwaway network namespace holding one bridge. Root only.
 */
import assert from 'node:assert/strict';
import { createExec } from '@pvc/runtime';
import { createIpBridges } from '../../../apps/vmd/src/host/bridges.js';
import { bridgesContract } from '../../../apps/vmd/src/host/testing/bridges-contract.js';
import { addNetns, deleteNetns, ip } from '../netd/nft-netns.js';

const NS = `pvc-brg-${process.pid}`;

bridgesContract('ip in a network namespace', () => {
  assert.equal(process.getuid?.(), 0, 'needs root (network namespaces)');
  addNetns(NS);
  ip('-n', NS, 'link', 'add', 'vmbr100', 'type', 'bridge');
  return Promise.resolve({
    port: createIpBridges({ exec: createExec(), prefix: ['ip', 'netns', 'exec', NS] }),
    present: 'vmbr100',
    missing: 'vmbr4242',
    teardown: () => Promise.resolve(deleteNetns(NS)),
  });
});
