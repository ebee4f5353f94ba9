import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { networkWaitStep, type ReportingNode } from './network-wait.js';

const n = (name: string, networks: number[] | undefined, running = true): ReportingNode => ({ name, running, networks });

describe('networkWaitStep (pvc network add|remove --wait)', () => {
  it('table: which nodes count, done, progress, failed', () => {
    const rows: [string, 'up' | 'gone', ReportingNode[], boolean, string][] = [
      ['up everywhere', 'up', [n('hv1', [1100]), n('hv2', [7, 1100])], true, 'done: vmbr1100 up on all 2 running nodes (hv1, hv2)'],
      ['one node still lacks it', 'up', [n('hv1', [1100]), n('hv2', []), n('hv3', [])], true, 'waiting: vmbr1100 up on 1/3 nodes; waiting for hv2, hv3'],
      ['a node without networks_up (original, networking off) is not waited for', 'up', [n('hv1', [1100]), n('hv2', undefined)], true, 'done: vmbr1100 up on the running node (hv1)'],
      ['a node that is not running is not waited for', 'up', [n('hv1', [1100]), n('hv2', [], false)], true, 'done: vmbr1100 up on the running node (hv1)'],
      ['no node reports', 'up', [n('hv1', undefined), n('hv2', [], false)], true, 'done: no running node reports its networks (networks_up): nothing to wait on'],
      ['removed meanwhile', 'up', [n('hv1', [])], false, 'failed: network 1100 was removed meanwhile'],
      ['gone: one node still lists it', 'gone', [n('hv1', []), n('hv2', [1100])], false, 'waiting: vmbr1100 gone on 1/2 nodes; waiting for hv2'],
      ['gone everywhere', 'gone', [n('hv1', []), n('hv2', [7])], false, 'done: vmbr1100 gone on all 2 running nodes (hv1, hv2)'],
    ];
    for (const [what, goal, nodes, exists, want] of rows) {
      const s = networkWaitStep(1100, goal, nodes, exists);
      const got = s.failed !== undefined ? `failed: ${s.failed}` : `${s.done ? 'done' : 'waiting'}: ${s.progress ?? ''}`;
      assert.equal(got, want, what);
    }
  });
});
