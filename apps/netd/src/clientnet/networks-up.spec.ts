import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock, createLogger, flushMicrotasks } from '@pvc/runtime';
import { nodeKeys, pair, paths, readKeyIfExists } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { DeviceAction, ObservedLink } from './model.js';
import { NetworksUpPublisher, bridgesUpAfter } from './networks-up.js';

const link = (name: string, up = true, kind = 'bridge'): ObservedLink => ({ name, index: 1, kind, mtu: 1500, up });

async function rig() {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  await zk.ensurePath(paths.node('hv1').root);
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'netd', dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  return { clock, server, zk, lines, pub: new NetworksUpPublisher({ zk, node: 'hv1', logger }) };
}

describe('networks_up', () => {
  it('bridgesUpAfter: observed vmbr<vni> bridges that are up, with the pass\'s creates, set-ups and deletes', () => {
    const rows: [string, ObservedLink[], DeviceAction[], number[]][] = [
      ['nothing', [], [], []],
      ['up bridges of any maker, ascending', [link('vmbr200'), link('vmbr7'), link('brcluster')], [], [7, 200]],
      ['a down bridge, a vmbr that is no bridge, a name that is no VNI', [link('vmbr5', false), link('vmbr6', true, 'dummy'), link('vmbr05')], [], []],
      ['created and set up in the pass', [], [{ kind: 'create-bridge', vni: 100, device: 'vmbr100', mtu: 1450 }, { kind: 'set-up', vni: 100, device: 'vmbr100' }], [100]],
      ['created, its set-up not applied (failed)', [], [{ kind: 'create-bridge', vni: 100, device: 'vmbr100', mtu: 1450 }], []],
      ['set up in the pass', [link('vmbr5', false)], [{ kind: 'set-up', vni: 5, device: 'vmbr5' }], [5]],
      ['deleted in the pass', [link('vmbr100')], [{ kind: 'delete', vni: 100, device: 'vmbr100', why: 'gone' }], []],
      ['the vxlan going up is not the bridge', [link('vmbr100', false)], [{ kind: 'set-up', vni: 100, device: 'vxlan100' }], []],
    ];
    for (const [what, observed, applied, want] of rows) assert.deepEqual(bridgesUpAfter(observed, applied), want, what);
  });

  it('publish writes only a changed list; an unreadable stored value is replaced', async () => {
    const r = await rig();
    const key = nodeKeys('hv1').networksUp;
    assert.equal(await r.pub.publish([1100, 7]), true);
    assert.equal((await r.zk.get(key.path)).data, '7 1100');
    const v = (await r.zk.get(key.path)).stat.version;
    assert.equal(await r.pub.publish([7, 1100]), true);
    assert.equal((await r.zk.get(key.path)).stat.version, v, 'same list: not written');
    await r.zk.write([[key.path, 'garbage']]);
    assert.equal(await r.pub.publish([7, 1100]), true);
    assert.deepEqual(await readKeyIfExists(r.zk, key), [7, 1100]);
  });

  it('clear removes a stale list (networking off); absent is fine; a failure is logged once and retried', async () => {
    const r = await rig();
    const key = nodeKeys('hv1').networksUp;
    assert.equal(await r.pub.clear(), true, 'absent: nothing to do');
    await r.zk.write([pair(key, [1100])]);
    r.server.failNextWrite({ code: 'CONNECTION_LOSS', count: 2 });
    const ac = new AbortController();
    const done = r.pub.clearUntilDone(r.clock, 10_000, ac.signal);
    await flushMicrotasks();
    assert.notEqual(await r.zk.exists(key.path), undefined, 'first try failed');
    await r.clock.advance(10_000);
    await flushMicrotasks();
    await r.clock.advance(10_000);
    await done;
    assert.equal(await r.zk.exists(key.path), undefined);
    assert.equal(r.lines.filter((l) => String(l.msg).startsWith('cannot remove the stale list')).length, 1, 'logged once');
    assert.equal(r.lines.filter((l) => String(l.msg).startsWith('networking is off on this node')).length, 1);
  });
});
