import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planFlush, planPrimary, planReady, planSecondary, type NodeFacts, type NodePlan } from './node-plan.js';

const facts = (o: Partial<NodeFacts> = {}): NodeFacts => ({
  node: 'hv1', mode: 'coordinator', daemonState: 'run', routerState: 'secondary', domainState: 'ready', primaryNode: 'hv2', ...o,
});
const kind = (p: NodePlan): string => (p.kind === 'write' ? `write ${p.key}=${p.value}` : p.kind === 'already' ? `already${p.inProgress ? ' (in progress)' : ''}` : 'refuse');

describe('node plans', () => {
  it('flush / ready by domain and daemon state', () => {
    const table: [Partial<NodeFacts>, string, string][] = [
      [{}, 'write domainstate=flush', 'already'],
      [{ domainState: 'flushed' }, 'already', 'write domainstate=unflush'],
      [{ domainState: 'flush' }, 'already (in progress)', 'write domainstate=unflush'],
      [{ domainState: 'unflush' }, 'write domainstate=flush', 'already (in progress)'],
      [{ daemonState: 'dead', domainState: 'flushed' }, 'already', 'refuse'],
      [{ daemonState: 'dead' }, 'refuse', 'already'],
      [{ daemonState: 'init', domainState: 'flush' }, 'refuse', 'refuse'],
    ];
    for (const [f, flush, ready] of table) {
      assert.equal(kind(planFlush(facts(f))), flush, `flush ${JSON.stringify(f)}`);
      assert.equal(kind(planReady(facts(f))), ready, `ready ${JSON.stringify(f)}`);
    }
  });

  it('primary / secondary by mode, daemon state, routerstate and primary_node', () => {
    const table: [Partial<NodeFacts>, string, string][] = [
      [{}, 'write primary_node=hv1', 'already'],
      [{ mode: 'hypervisor', routerState: 'client' }, 'refuse', 'refuse'],
      [{ primaryNode: 'hv1', routerState: 'primary' }, 'already', 'write primary_node=none'],
      [{ primaryNode: 'hv1', routerState: 'takeover' }, 'already (in progress)', 'write primary_node=none'],
      [{ primaryNode: 'none', routerState: 'relinquish' }, 'write primary_node=hv1', 'already (in progress)'],
      [{ daemonState: 'dead' }, 'refuse', 'already'],
      [{ daemonState: 'dead', primaryNode: 'hv1', routerState: 'primary' }, 'already', 'refuse'],
    ];
    for (const [f, primary, secondary] of table) {
      assert.equal(kind(planPrimary(facts(f))), primary, `primary ${JSON.stringify(f)}`);
      assert.equal(kind(planSecondary(facts(f))), secondary, `secondary ${JSON.stringify(f)}`);
    }
  });
});
