/**
 * Node flush and ready through vmd on the real cluster (issue 4 item 3): the node services on 3
 * harness hosts, 4 TCG guests defined with pvc on hv1. `pvc node flush hv1` (domainstate=flush) → vmd on hv1 moves
 * them (live, several at a time) to hv2/hv3 chosen by the selector and writes `flushed` — never
 * while virsh on hv1 still shows one running. `unflush` → they come back (lastnode hv1) and hv1
 * is `ready`. Throughout, no guest runs (state running) on two hosts (DoubleRunWatch, 200 ms).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { missingPrerequisites } from './harness/index.js';
import { startFailoverCluster, type FailoverCluster } from './failover-scenario.js';
import { flushAndWait, placeGuests, placement } from './flush-scenario.js';
import type { MigGuest } from './migration-scenario.js';
import { staleBuilds } from './pvc-node.js';

const SETTINGS = { keepaliveInterval: 2, fenceIntervals: 6, successfulFence: 'none' as const };
const log = (l: string): void => console.log(`  [flush] ${l}`);

describe('vmd node flush / ready on the real cluster [root only]', () => {
  let fc: FailoverCluster | undefined;
  let guests: MigGuest[] = [];

  before(async () => {
    const missing = missingPrerequisites();
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    const stale = staleBuilds();
    if (stale.length > 0) log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
    fc = await startFailoverCluster('vfl', SETTINGS, log);
  });

  after(async () => {
    await fc?.close();
  });

  it('4 guests defined in ZK on hv1 run there', async () => {
    guests = await placeGuests(fc!, fc!.cluster.host('hv1'), 4);
    const where = await placement(fc!.cluster.hosts, guests);
    assert.deepEqual([...where.values()], [['hv1'], ['hv1'], ['hv1'], ['hv1']]);
  });

  it('pvc node flush hv1: every guest runs on hv2/hv3 (virsh), lastnode hv1; hv1 flushed, never while a guest still ran there', async () => {
    const r = await flushAndWait(fc!, fc!.cluster.host('hv1'), guests, 'flush');
    log(`flush of ${guests.length} guests: ${(r.ms / 1000).toFixed(1)} s (${r.polls} polls)`);
    assert.deepEqual(r.earlyFinal, []);
    const where = await placement(fc!.cluster.hosts, guests);
    for (const g of guests) {
      const on = where.get(g.uuid) ?? [];
      assert.equal(on.length, 1, `${g.name} runs on ${on.join(',') || 'no host'}`);
      assert.ok(on[0] === 'hv2' || on[0] === 'hv3', `${g.name} on ${on[0]}`);
      const p = paths.domain(g.uuid);
      assert.deepEqual([await fc!.zk.read(p.state), await fc!.zk.read(p.node), await fc!.zk.read(p.lastNode)], ['start', on[0], 'hv1']);
    }
    log(`placed: ${guests.map((g) => `${g.name}→${where.get(g.uuid)?.[0]}`).join(' ')}`);
    assert.equal(await fc!.zk.read(paths.node('hv1').domainState), 'flushed');
  });

  it('pvc node ready hv1 (unflush): the guests come back to hv1 (lastnode cleared); hv1 ready', async () => {
    const r = await flushAndWait(fc!, fc!.cluster.host('hv1'), guests, 'unflush');
    log(`unflush: ${(r.ms / 1000).toFixed(1)} s`);
    const where = await placement(fc!.cluster.hosts, guests);
    for (const g of guests) {
      assert.deepEqual(where.get(g.uuid), ['hv1'], g.name);
      const p = paths.domain(g.uuid);
      assert.deepEqual([await fc!.zk.read(p.state), await fc!.zk.read(p.node), await fc!.zk.read(p.lastNode)], ['start', 'hv1', '']);
    }
  });

  it('no guest ever ran on two hosts (every libvirtd polled every 200 ms, state running)', () => {
    log(`DoubleRunWatch: ${fc!.watch.polls} polls, ${fc!.watch.violations.length} running on two (confirmed), ${fc!.watch.unconfirmed.length} unconfirmed (parallel lists straddling a switch-over), ${fc!.watch.activeOnTwo.length} active on two (incoming migrations)`);
    assert.deepEqual(fc!.watch.violations, []);
    assert.ok(fc!.watch.polls > 10);
  });
});
