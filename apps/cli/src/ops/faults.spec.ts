import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codec } from '@pvc/zk';
import { pick } from '../commands/cluster-fault.js';
import { clusterHealth } from '@pvc/zk';
import { byHealthImpact, byLastReported, faultView, type StoredFault } from './faults.js';

const at = (text: string): number => codec.localTime.decode(text, 'test');

function stored(id: string, delta: number, last: string, status: 'new' | 'ack' = 'new'): StoredFault {
  return { id, firstTime: at('2026-01-01 00:00:00'), lastTime: at(last), ackTime: status === 'ack' ? at('2026-01-02 10:00:00') : null, status, delta, message: `${id} happened` };
}

describe('faultView', () => {
  it('shows the stored times in their format and an acknowledged fault at delta 0', () => {
    const f = faultView(stored('DEAD_NODE_HV1', 50, '2026-01-02 09:30:05', 'ack'), ['a problem']);
    assert.deepEqual(f, {
      id: 'DEAD_NODE_HV1', status: 'ack', delta: 0, message: 'DEAD_NODE_HV1 happened',
      firstReported: '2026-01-01 00:00:00', lastReported: '2026-01-02 09:30:05', acknowledgedAt: '2026-01-02 10:00:00', problems: ['a problem'],
    });
    const n = faultView({ ...stored('X', 10, '2026-01-02 09:30:05'), firstTime: undefined });
    assert.equal(n.delta, 10);
    assert.equal(n.firstReported, '');
    assert.equal(n.acknowledgedAt, '');
  });
});

describe('clusterHealth', () => {
  it('is 100 minus the deltas of the faults not acknowledged, never below 0', () => {
    assert.equal(clusterHealth([]), 100);
    const faults = [stored('A', 50, '2026-01-02 00:00:00'), stored('B', 10, '2026-01-02 00:00:00'), stored('C', 50, '2026-01-02 00:00:00', 'ack')].map((f) => faultView(f));
    assert.equal(clusterHealth(faults), 40);
    const many = ['A', 'B', 'C'].map((id) => faultView(stored(id, 50, '2026-01-02 00:00:00')));
    assert.equal(clusterHealth(many), 0);
  });
});

describe('fault order', () => {
  const faults = [
    stored('OLD_BIG', 50, '2026-01-01 08:00:00'),
    stored('SMALL', 10, '2026-01-03 08:00:00'),
    stored('NEW_BIG', 50, '2026-01-02 08:00:00'),
    stored('ACKED', 50, '2026-01-04 08:00:00', 'ack'),
    stored('SAME_A', 5, '2026-01-01 00:00:00'),
    stored('SAME_B', 5, '2026-01-01 00:00:00'),
  ].map((f) => faultView(f));

  it('health messages: by delta, then the last reported, both descending (acknowledged last), then ID', () => {
    assert.deepEqual([...faults].sort(byHealthImpact).map((f) => f.id), ['NEW_BIG', 'OLD_BIG', 'SMALL', 'SAME_A', 'SAME_B', 'ACKED']);
  });

  it('fault list: the last reported first, then ID', () => {
    assert.deepEqual([...faults].sort(byLastReported).map((f) => f.id), ['ACKED', 'SMALL', 'NEW_BIG', 'OLD_BIG', 'SAME_A', 'SAME_B']);
  });
});

describe('pick (ack/delete arguments)', () => {
  it('takes IDs, or --all with --yes; refuses both, neither, and --all without --yes (usage, exit 2)', () => {
    assert.deepEqual(pick('ack', ['A', 'B'], {}), { all: false, ids: ['A', 'B'] });
    assert.deepEqual(pick('ack', [], { all: true, yes: true }), { all: true });
    for (const [ids, o, re] of [
      [['A'], { all: true, yes: true }, /not both/],
      [[], {}, /give one or more fault IDs/],
      [[], { all: true }, /add --yes to confirm/],
    ] as const) {
      assert.throws(() => pick('delete', ids, o), (err: unknown) => (err as { exitCode: number }).exitCode === 2 && re.test((err as Error).message));
    }
  });
});
