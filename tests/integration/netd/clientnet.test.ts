/**
 * The real ClientDevicePort (`ip`, `bridge`, `sysctl` through Exec) against the contract the fake
 * keeps, inside a throwaway network namespace: veth `c0` is the cluster device, veth `b0` the
 * bridged networks' device. Whether the kernel makes 802.1Q VLANs is probed first: on the test
 * machines it does not, and the contract then shows the clear error for the bridged network while
 * the managed ones converge. Root only; fails, naming what is missing, without ip/bridge/sysctl.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createExec } from '@pvc/runtime';
import { createIpDevices } from '../../../apps/netd/src/clientnet/ip-devices.js';
import { deviceContract } from '../../../apps/netd/src/clientnet/testing/device-contract.js';
import { addNetns, deleteNetns, ip } from './nft-netns.js';

const NS = `pvc-cnet-${process.pid}`;

/** Fails loudly when the test cannot run here. */
function requireTools(): void {
  assert.equal(process.getuid?.(), 0, 'needs root (network namespaces)');
  for (const [cmd, arg] of [['ip', '-V'], ['bridge', '-V'], ['sysctl', '--version']] as const) {
    const r = spawnSync(cmd, [arg], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${cmd} is needed (Debian packages iproute2, procps): ${r.error?.message ?? r.stderr}`);
  }
}

/** Whether this kernel makes 802.1Q VLAN links (it does not on the test machines). */
function kernelHasVlans(ns: string): boolean {
  const r = spawnSync('ip', ['-n', ns, 'link', 'add', 'link', 'b0', 'name', 'vprobe', 'type', 'vlan', 'id', '9'], { encoding: 'utf8' });
  if (r.status === 0) {
    ip('-n', ns, 'link', 'del', 'vprobe');
    return true;
  }
  assert.match(r.stderr, /Unknown device type|Operation not supported/, `an unexpected answer to a VLAN probe: ${r.stderr}`);
  return false;
}

deviceContract('ip + bridge + sysctl in a network namespace', () => {
  requireTools();
  addNetns(NS);
  try {
    for (const [a, b] of [['c0', 'c1'], ['b0', 'b1']]) {
      ip('-n', NS, 'link', 'add', a!, 'mtu', '1500', 'type', 'veth', 'peer', 'name', b!);
      ip('-n', NS, 'link', 'set', a!, 'up');
      ip('-n', NS, 'link', 'set', b!, 'up');
    }
    ip('-n', NS, 'address', 'add', '192.0.2.1/24', 'dev', 'c0');
    const vlans = kernelHasVlans(NS);
    return Promise.resolve({
      port: createIpDevices({ exec: createExec(), prefix: ['ip', 'netns', 'exec', NS] }),
      facts: { clusterDevice: 'c0', clusterMtu: 1500, bridgeDevice: 'b0', bridgeMtu: 1500, clusterAddress: '192.0.2.1', peers: [] },
      vlans,
      addForeignBridge: (name: string) => {
        ip('-n', NS, 'link', 'add', name, 'type', 'bridge');
        ip('-n', NS, 'link', 'set', name, 'up');
        return Promise.resolve();
      },
      teardown: () => {
        deleteNetns(NS);
        return Promise.resolve();
      },
    });
  } catch (err) {
    deleteNetns(NS);
    throw err;
  }
});
