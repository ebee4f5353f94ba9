/**
 * A fencer that dies mid-fence does not stall recovery (issue 14 item 1), on the real cluster:
 * 4 hosts (hv1–hv3 coordinators), a guest on each; hv4 fails, and the coordinator fencing it fails
 * while hv4's (slowed) BMC call is in flight. The survivors break the dead fencer's fence lock once
 * it has been silent for the window, fence it, resume hv4's fence, and both hosts' guests run on the
 * survivors; no guest ever runs on two hosts. Which coordinator fences is up to the race for the
 * fence lock; whether it was also the ZK leader is logged.
 *
 * What this test asserts is the cause of a fast recovery, not a time: hv4's fence resumes before
 * Zookeeper could have expired the dead fencer's session (so nothing waited for it). The target
 * (both hosts' guests running within 2 × window + 5 s of the fencer's death) is a speed figure:
 * the test logs it, `bench/fencer-death.ts` measures it and docs/benchmarks.md records it. A
 * timed assertion failed CI once at 11.4 s against 11 s on 2 loaded cores.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KEEPALIVED_SESSION_TIMEOUT_MS } from '@pvc/zk';
import { missingPrerequisites } from './harness/index.js';
import { FENCER_DEATH_SETTINGS, formatFencerDeath, killFencerMidFence, startFencerDeathCluster } from './fencer-death-scenario.js';
import type { FailoverCluster, Guest } from './failover-scenario.js';
import { staleBuilds } from './pvc-node.js';

const log = (l: string): void => console.log(`  [fencer-death] ${l}`);

describe('a fencer dying mid-fence on the real cluster [root only]', () => {
  let fc: FailoverCluster | undefined;
  let byHost = new Map<string, Guest>();

  before(async () => {
    const missing = missingPrerequisites();
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    const stale = staleBuilds();
    if (stale.length > 0) log(`warning: dist older than src in ${stale.join(', ')} (the services run from dist)`);
    ({ fc, byHost } = await startFencerDeathCluster('fdth', log));
  });

  after(async () => {
    await fc?.close();
  });

  it('both dead hosts’ guests run on the survivors, hv4’s fence resumed before the fencer’s session could expire, never twice', async () => {
    const run = await killFencerMidFence(fc!, byHost, log);
    for (const l of formatFencerDeath(run)) log(l);
    assert.ok(run.fencer && run.fencer !== 'hv4', `a coordinator held the fence lock (${run.fencer ?? 'none'})`);
    for (const g of run.guests) assert.ok(run.running.has(g.name), `${g.name} runs on a survivor`);
    assert.ok(run.totalMs !== undefined, 'a total was measured');
    log(`target: total ${run.totalMs} ms against 2 × window + 5 s = ${run.boundMs} ms (${run.totalMs <= run.boundMs ? 'met' : 'missed'}; measured by bench/fencer-death.ts)`);
    const fencerDead = run.events.find((e) => e.msg === 'node-dead' && e.detail.includes(`node=${run.fencer}`));
    assert.ok(fencerDead, `a survivor declared the fencer ${run.fencer} dead`);
    assert.ok(run.events.some((e) => e.msg.startsWith('breaking a lock held by a node silent') && e.detail.includes(`holder=${run.fencer}`)),
      'a survivor broke the dead fencer’s lock (it did not wait for its session to expire)');
    const resumed = run.events.find((e) => e.msg === 'fence-start' && e.detail.includes('node=hv4') && e.detail.includes('resumed=true'));
    assert.ok(resumed, 'hv4’s fence was resumed');
    // The fencer wrote its last keepalive at most one interval before it was cut off, so Zookeeper
    // could expire its session from session timeout − interval after its death on.
    const expiryMs = KEEPALIVED_SESSION_TIMEOUT_MS - FENCER_DEATH_SETTINGS.keepaliveInterval * 1000;
    const resumedAfterMs = resumed.at - run.fencerDiedAt!;
    log(`hv4's fence resumed ${resumedAfterMs} ms after the fencer died (its ZK session could expire ${expiryMs} ms after it at the earliest)`);
    assert.ok(resumedAfterMs < expiryMs, `hv4's fence resumed ${resumedAfterMs} ms after the fencer's death, not before its session could expire (${expiryMs} ms)`);
    assert.deepEqual(run.doubleRuns, [], 'no guest ran on two hosts');
  });
});
