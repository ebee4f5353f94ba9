/**
 * Issue 14 item 6 against the real thing: a vmd process, a private libvirtd with tiny TCG guests
 * and a standalone ZooKeeper (burst-rig.ts). After a fence, keepaliled's recovery writes
 * `state=start node=<target>` one VM after another, a few ms apart; vmd must create those guests
 * together, not one pass after another. Root only (namespaces, qemu:///system); fails, naming
 * what is missing, without libvirt, qemu, the cloud kernel or ZooKeeper.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paths } from '@pvc/zk';
import { waitUntil } from '../../support/wait.js';
import { burstName, burstUuid, startBurstRig, type BurstRig } from './burst-rig.js';

const GUESTS = 4;

describe('vmd starts recovered guests concurrently (real vmd, libvirtd and ZooKeeper)', () => {
  let rig: BurstRig | undefined;
  before(async () => {
    rig = await startBurstRig({ guests: GUESTS });
  });
  after(async () => {
    await rig?.destroy();
  });

  it(`${GUESTS} guests written 5 ms apart: each created once, none failed, every start begun before the first one ended`, async () => {
    const r = rig!;
    const res = await r.recover(GUESTS, 5);
    const names = Array.from({ length: GUESTS }, (_, i) => burstName(i));
    assert.deepEqual(r.lv.running(), [...names].sort());
    // vmd logs `VM started` after createXML returned, a moment after libvirt's event.
    const starts = await waitUntil(() => r.loggedStarts(), { what: `${GUESTS} \`VM started\` log lines`, until: (l) => l.length >= GUESTS });
    assert.deepEqual(starts.map((s) => s.name).sort(), [...names].sort(), 'one `VM started` per guest: none created twice');
    assert.doesNotMatch(r.vmd.output(), /VM failed to start|VM action failed|vm-start: failed/);
    for (let i = 0; i < GUESTS; i++) assert.equal(await r.zk.read(paths.domain(burstUuid(i)).state), 'start');
    // A reconciler that awaits every createXML of a pass starts the guests written while the
    // first one is being created only after it (one pass after another).
    const first = starts.reduce((a, b) => (b.endedMs < a.endedMs ? b : a));
    const late = starts.filter((s) => s.beganMs >= first.endedMs);
    assert.deepEqual(late.map((s) => s.name), [], `starts that waited for ${first.name}'s (ended ${first.endedMs}); all: ${JSON.stringify(starts)}`);
    assert.ok(res.totalMs < 30_000);
  });

  it('moved away again, every guest is destroyed; written back, each is started once more (nothing stuck busy)', async () => {
    const r = rig!;
    await r.reset();
    const before = r.loggedStarts().length;
    await r.recover(GUESTS, 5);
    await waitUntil(() => r.loggedStarts().length - before, { what: `${GUESTS} more \`VM started\` lines`, until: (n) => n >= GUESTS });
    assert.equal(r.loggedStarts().length - before, GUESTS);
    assert.equal(r.lv.running().length, GUESTS);
    await r.reset();
  });
});
