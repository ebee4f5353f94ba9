/**
 * A host link that goes down at run time (issue 11, bad input and faults): on the real cluster with
 * bare links, hv2's `storage` link is set down inside its namespace. The `nics` health plugin
 * reports it (its message names the device, health delta 10) and nothing is torn down: `brstorage`
 * keeps hv2's address, the node stays `run` and is not fenced, no VM or floating address moves. With
 * the link up again the plugin's delta returns to 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createExec } from '@pvc/runtime';
import { nodeKeys, pluginKeys, readKey } from '@pvc/zk';
import { missingPrerequisites } from './harness/index.js';
import { startFailoverCluster, type FailoverCluster } from './failover-scenario.js';
import { staleBuilds } from './pvc-node.js';
import { waitUntil } from '../support/wait.js';

const SETTINGS = { keepaliveInterval: 1, fenceIntervals: 5, monitoringInterval: 2 };
const log = (l: string): void => console.log(`  [link-down] ${l}`);

describe('cluster: a host link that goes down at run time', { timeout: 240_000 }, () => {
  let fc: FailoverCluster | undefined;
  const exec = createExec();

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    assert.deepEqual(staleBuilds(), [], 'the node services must be built (npx tsc -b tsconfig.json)');
    fc = await startFailoverCluster('pvcld', SETTINGS, log);
  });

  after(async () => {
    await fc?.close();
  });

  it('is reported by the nics plugin; bridge and address stay; back to 0 when the link is up again', async () => {
    const { cluster, zk } = fc!;
    const hv2 = cluster.hosts.find((h) => h.name === 'hv2')!;
    const nics = pluginKeys('hv2', 'nics');
    const ip = async (...args: string[]): Promise<string> => {
      const r = await exec.run('ip', ['-n', hv2.netns, ...args]);
      assert.equal(r.exitCode, 0, `ip ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    await waitUntil(async () => (await readKey(zk, nics.healthDelta)) === 0 && (await readKey(zk, nics.lastRun)) > 0, {
      what: 'hv2 nics plugin healthy before the cut', timeoutMs: 30_000, intervalMs: 250,
    });

    await ip('link', 'set', 'storage', 'down');
    const reported = await waitUntil(async () => {
      const [delta, message] = [await readKey(zk, nics.healthDelta), await readKey(zk, nics.message)];
      return delta === 10 && /storage/.test(message) ? message : undefined;
    }, { what: 'hv2 nics plugin reports the storage link down', timeoutMs: 30_000, intervalMs: 250 });
    log(`nics: ${reported}`);

    // Nothing torn down: the bridge keeps its address, the node keeps running.
    assert.match(await ip('-4', '-o', 'address', 'show', 'dev', 'brstorage'), new RegExp(`${hv2.storageIp.replace(/\./g, '\\.')}/`));
    for (const h of cluster.hosts) assert.equal(await readKey(zk, nodeKeys(h.name).daemonState), 'run', `${h.name} is still run`);

    await ip('link', 'set', 'storage', 'up');
    await waitUntil(async () => (await readKey(zk, nics.healthDelta)) === 0, {
      what: 'hv2 nics plugin healthy again', timeoutMs: 30_000, intervalMs: 250,
    });
    assert.match(await ip('-4', '-o', 'address', 'show', 'dev', 'brstorage'), new RegExp(`${hv2.storageIp.replace(/\./g, '\\.')}/`));
  });
});
