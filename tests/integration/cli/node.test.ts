// `pvc node ...` against a real Zookeeper; fake daemons (fake-node-daemons.ts) where a command waits.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { newDomainObject, paths, type ZkClient } from '@pvc/zk';
import { CliRig, domainXml, type PvcRun } from './support.js';
import { waitUntil } from '../../support/wait.js';
import { FAKE_REASONS, FakeNodeDaemons, type FakeDaemonKnobs } from './fake-node-daemons.js';

const PASSWORD = 'Secret-IPMI-pass';
const uuid = (i: number): string => `0de30000-0000-4000-8000-00000000000${i}`;

/** Every key under /nodes and /config with its data version: a refused command changes none. */
async function versions(zk: ZkClient, root = '/'): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const walk = async (p: string): Promise<void> => {
    const st = await zk.exists(p);
    if (st) out.set(p, st.version);
    for (const c of await zk.children(p).catch(() => [] as string[])) await walk(`${p === '/' ? '' : p}/${c}`);
  };
  for (const top of root === '/' ? ['/nodes', '/config', '/domains'] : [root]) await walk(top);
  return out;
}

async function vmOn(rig: CliRig, i: number, node: string): Promise<void> {
  const obj = newDomainObject({ uuid: uuid(i), name: `vm${i}`, xml: domainXml(`vm${i}`, { uuid: uuid(i) }), node, state: 'start' });
  await rig.zk.createObject(obj.root, obj.entries);
}

function noPassword(r: PvcRun): void {
  assert.ok(!r.stdout.includes(PASSWORD) && !r.stderr.includes(PASSWORD), 'the IPMI password must never be shown');
}

describe('pvc node', () => {
  let rig: CliRig;
  let fakes: FakeNodeDaemons | undefined;
  const daemons = (knobs: FakeDaemonKnobs = {}): FakeNodeDaemons => {
    fakes = new FakeNodeDaemons(rig.zk, ['hv1', 'hv2', 'hv3'], knobs).start();
    return fakes;
  };
  before(async () => {
    rig = await CliRig.start();
  });
  after(async () => rig.destroy());
  beforeEach(async () => {
    await rig.reset();
    await rig.addNode('hv1', { routerState: 'primary', memTotalMiB: 32768 });
    await rig.addNode('hv2');
    await rig.addNode('hv3', { mode: 'hypervisor', daemonState: 'dead', domainState: 'flushed', health: 'None' });
    await rig.zk.write([[paths.config.primaryNode, 'hv1']]);
    await vmOn(rig, 1, 'hv1');
    await vmOn(rig, 2, 'hv1');
    await rig.zk.write([[paths.node('hv1').runningDomains, `${uuid(1)} ${uuid(2)}`]]);
  });
  afterEach(() => {
    fakes?.stop();
    fakes = undefined;
  });

  describe('list / info / is-primary', () => {
    it('list shows every node with its states, VMs and memory; filters; JSON; never the IPMI password', async () => {
      const r = await rig.pvc(['node', 'list']);
      assert.equal(r.code, 0, r.stderr);
      const [header, ...rows] = r.stdout.trimEnd().split('\n');
      assert.match(header ?? '', /^Name\s+Mode\s+Daemon\s+Coordinator\s+Domain\s+Health\s+VMs\s+Load\s+vCPUs\s+Mem total\s+Used\s+Free\s+Alloc\s+Prov\s+Version$/);
      assert.equal(rows.length, 3);
      assert.match(rows[0] ?? '', /^hv1\s+coordinator\s+run\s+primary\s+ready\s+100%\s+2\s+.*32\.0G\s+1\.0G\s+31\.0G\s+.*0\.1\.0$/);
      assert.match(rows[2] ?? '', /^hv3\s+hypervisor\s+dead\s+client\s+flushed\s+-\s+0\s/);
      noPassword(r);
      const dead = await rig.ok('node', 'list', '--daemon-state', 'dead');
      assert.deepEqual(dead.trimEnd().split('\n').slice(1).map((l) => l.split(/\s+/)[0]), ['hv3']);
      const prim = await rig.ok('node', 'list', '--coordinator-state', 'secondary', '--domain-state', 'ready');
      assert.deepEqual(prim.trimEnd().split('\n').slice(1).map((l) => l.split(/\s+/)[0]), ['hv2']);
      const json = await rig.pvc(['node', 'list', '-f', 'json']);
      const nodes = JSON.parse(json.stdout) as { name: string; runningDomains: string[]; memory: { totalMiB: number } }[];
      assert.deepEqual(nodes.map((n) => [n.name, n.runningDomains.length, n.memory.totalMiB]), [['hv1', 2, 32768], ['hv2', 0, 16384], ['hv3', 0, 16384]]);
      noPassword(json);
      const none = await rig.pvc(['node', 'list', '--domain-state', 'flush']);
      assert.equal(none.code, 0);
      assert.equal(none.stderr, 'No nodes found\n');
    });

    it('info shows states, keepalive age, running VMs by name, IPMI host, plugins with --long; never the password', async () => {
      const k = paths.node('hv1');
      const p = k.monitoringPlugin('disk');
      await rig.zk.ensurePath(p.root);
      await rig.zk.write([[k.keepalive, String(Math.floor(Date.now() / 1000) - 7)], [k.monitoringPlugins, 'disk'],
        [p.healthDelta, '10'], [p.message, 'sda is 91% full'], [p.lastRun, '1700000000'], [k.monitoringHealth, '90']]);
      const r = await rig.pvc(['node', 'info', 'hv1']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Name:\s+hv1$/m);
      assert.match(r.stdout, /^Coordinator state:\s+primary$/m);
      assert.match(r.stdout, /^Health:\s+90%$/m);
      assert.match(r.stdout, /^Last keepalive:\s+(7|8) s ago$/m);
      assert.match(r.stdout, /^Kernel \/ OS \/ arch:\s+6\.1\.0-test \/ x86_64 \/ x86_64$/m);
      assert.match(r.stdout, /^Running VMs:\s+2: vm1, vm2$/m);
      assert.match(r.stdout, /^Flush failures:\s+none$/m);
      assert.match(r.stdout, /^IPMI host:\s+hv1-lom$/m);
      assert.match(r.stdout, /^Health plugins:\s+1 \(--long shows them\)$/m);
      assert.doesNotMatch(r.stdout, /sda is 91% full/);
      const long = await rig.pvc(['node', 'info', 'hv1', '--long']);
      assert.match(long.stdout, /^disk\s+10\s+sda is 91% full$/m);
      const json = await rig.pvc(['node', 'info', 'hv1', '-f', 'json']);
      const info = JSON.parse(json.stdout) as { runningVms: { name: string }[]; keepaliveAgeS: number; plugins: { name: string; delta: number }[]; ipmiHostname: string; flushFailures: unknown[] };
      assert.deepEqual(info.runningVms.map((v) => v.name), ['vm1', 'vm2']);
      assert.deepEqual(info.flushFailures, []);
      assert.ok(info.keepaliveAgeS >= 7 && info.keepaliveAgeS <= 8, String(info.keepaliveAgeS));
      assert.deepEqual(info.plugins.map((x) => [x.name, x.delta]), [['disk', 10]]);
      assert.equal(info.ipmiHostname, 'hv1-lom');
      for (const run of [r, long, json]) noPassword(run);
    });

    it('an unknown node is exit 1 naming the known ones, for every node command', async () => {
      for (const args of [['info', 'hv9'], ['log', 'hv9'], ['flush', 'hv9'], ['ready', 'hv9'], ['primary', 'hv9'], ['secondary', 'hv9'], ['is-primary', 'hv9']]) {
        const r = await rig.pvc(['node', ...args]);
        assert.equal(r.code, 1, args.join(' '));
        assert.equal(r.stderr, 'pvc: no node named "hv9" (nodes: hv1, hv2, hv3)\n');
      }
    });

    it('is-primary: exit 0 for the primary, 1 otherwise; nothing on stdout unless -f json', async () => {
      const yes = await rig.pvc(['node', 'is-primary', 'hv1']);
      assert.deepEqual([yes.code, yes.stdout, yes.stderr], [0, '', '']);
      const no = await rig.pvc(['node', 'is-primary', 'hv2']);
      assert.deepEqual([no.code, no.stdout, no.stderr], [1, '', 'pvc: node hv2 is not the primary (primary_node is hv1)\n']);
      const json = await rig.pvc(['node', 'is-primary', 'hv2', '-f', 'json']);
      assert.equal(json.code, 1);
      assert.deepEqual(JSON.parse(json.stdout), { node: 'hv2', primary: false, primaryNode: 'hv1' });
    });
  });

  describe('log', () => {
    const logKey = paths.logs.node('hv1').messages;
    const lines = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `pvcnoded: line ${from + i}`);

    it('says so when the node has no log in ZK (exit 1); bad --lines is exit 2', async () => {
      const r = await rig.pvc(['node', 'log', 'hv1']);
      assert.deepEqual([r.code, r.stderr], [1, 'pvc: node hv1 has no log in Zookeeper (its daemons do not write one, or logging to ZK is off)\n']);
      const bad = await rig.pvc(['node', 'log', 'hv1', '-l', '0']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--lines: expected a positive whole number, got "0"/);
    });

    it('shows the last 10 lines by default, -l N, colours stripped when piped', async () => {
      await rig.zk.ensurePath(paths.logs.node('hv1').root);
      await rig.zk.write([[logKey, [...lines(1, 11), '\x1b[31mpvcnoded: red\x1b[0m'].join('\n')]]);
      assert.equal(await rig.ok('node', 'log', 'hv1'), `${[...lines(3, 11), 'pvcnoded: red'].join('\n')}\n`);
      assert.equal(await rig.ok('node', 'log', 'hv1', '--lines', '2'), 'pvcnoded: line 11\npvcnoded: red\n');
      const json = JSON.parse(await rig.ok('node', 'log', 'hv1', '-l', '1', '--format', 'json')) as unknown;
      assert.deepEqual(json, { node: 'hv1', lines: ['\x1b[31mpvcnoded: red\x1b[0m'] });
      const both = await rig.pvc(['node', 'log', 'hv1', '-f', '--format', 'json']);
      assert.deepEqual([both.code, both.stderr], [2, 'pvc: --format json cannot be combined with --follow\n']);
    });

    it('--follow prints each new line once (appends and trims) until the abort signal', async () => {
      await rig.zk.ensurePath(paths.logs.node('hv1').root);
      await rig.zk.write([[logKey, lines(1, 12).join('\n')]]);
      const abort = new AbortController();
      const run = rig.pvcLive(['node', 'log', 'hv1', '-l', '2', '--follow'], { signal: abort.signal });
      const shown = (line: string): Promise<unknown> => waitUntil(() => run.output().includes(`${line}\n`), { what: `"${line}" printed by node log --follow`, timeoutMs: 10_000 });
      await shown('line 12');
      await rig.zk.write([[logKey, lines(1, 13).join('\n')]]);
      await shown('line 13');
      await rig.zk.write([[logKey, lines(4, 15).join('\n')]]);
      await shown('line 15');
      abort.abort();
      const r = await run.done;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${lines(11, 15).join('\n')}\n`);
    });
  });

  describe('flush / ready', () => {
    it('flush writes domainstate flush (and nothing else) and returns at once without --wait', async () => {
      const before = await versions(rig.zk);
      const r = await rig.pvc(['node', 'flush', 'hv1']);
      assert.deepEqual([r.code, r.stdout], [0, 'Flushing node hv1: its VMs move to other nodes (domainstate flush)\n']);
      const now = await versions(rig.zk);
      const changed = [...now].filter(([p, v]) => before.get(p) !== v).map(([p]) => p);
      assert.deepEqual(changed, [paths.node('hv1').domainState]);
      assert.equal(await rig.zk.read(paths.node('hv1').domainState), 'flush');
    });

    it('refuses a node whose daemon is not run, and says "already" for a flushed / ready node; nothing written', async () => {
      const start = await versions(rig.zk);
      const deadReady = await rig.pvc(['node', 'unflush', 'hv3']);
      assert.deepEqual([deadReady.code, deadReady.stderr], [1, 'pvc: node hv3 cannot be readied: its daemon is "dead", not "run"\n']);
      const ready = await rig.pvc(['node', 'ready', 'hv1', '--wait']);
      assert.deepEqual([ready.code, ready.stdout], [0, 'node hv1 is already ready\n']);
      assert.deepEqual(await versions(rig.zk), start);
      await rig.zk.write([[paths.node('hv3').domainState, 'ready'], [paths.node('hv2').domainState, 'flushed']]);
      const before = await versions(rig.zk);
      const dead = await rig.pvc(['node', 'flush', 'hv3']);
      assert.deepEqual([dead.code, dead.stderr], [1, 'pvc: node hv3 cannot be flushed: its daemon is "dead", not "run"\n']);
      const flushed = await rig.pvc(['node', 'flush', 'hv2']);
      assert.deepEqual([flushed.code, flushed.stdout], [0, 'node hv2 is already flushed\n']);
      assert.deepEqual(await versions(rig.zk), before);
    });

    it('flush --wait shows the VMs leaving until flushed; ready --wait brings them back', async () => {
      const f = daemons({ stepMs: 300 });
      const r = await rig.pvc(['node', 'flush', 'hv1', '--wait']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'Flushing node hv1: its VMs move to other nodes (domainstate flush)\nNode hv1 is flushed\n');
      assert.match(r.stderr, /^flush hv1: 2 VMs still on hv1: vm1 \(start\), vm2 \(start\)$/m);
      assert.match(r.stderr, /^flush hv1: 2 VMs still on hv1: vm1 \(migrate → hv2\), vm2 \(start\)$/m);
      assert.match(r.stderr, /^flush hv1: 1 VM still on hv1: vm2 \(start\)$/m);
      assert.equal(await rig.zk.read(paths.node('hv1').domainState), 'flushed');
      assert.equal(await rig.zk.read(paths.node('hv2').runningDomains), `${uuid(1)} ${uuid(2)}`);
      assert.equal(await rig.zk.read(paths.domain(uuid(1)).lastNode), 'hv1');
      const back = await rig.pvc(['node', 'ready', 'hv1', '-w']);
      assert.equal(back.code, 0, back.stderr);
      assert.equal(back.stdout, 'Readying node hv1: its VMs come back (domainstate unflush)\nNode hv1 is ready\n');
      assert.match(back.stderr, /^ready hv1: 2 VMs coming back to hv1: vm1 \(start on hv2\), vm2 \(start on hv2\)$/m);
      assert.equal(await rig.zk.read(paths.node('hv1').runningDomains), `${uuid(1)} ${uuid(2)}`);
      assert.deepEqual(f.events.filter((e) => e.startsWith('hv1 domainstate')), ['hv1 domainstate flushed', 'hv1 domainstate ready']);
    });

    it('flush --wait ends soon after the flush gives up: exit 1 naming each VM not moved and its reason; node info lists them; ready --wait clears them', async () => {
      await vmOn(rig, 3, 'hv1');
      await rig.zk.write([[paths.node('hv1').runningDomains, `${uuid(1)} ${uuid(2)} ${uuid(3)}`]]);
      // Decoys: a reason of this node's flush on a VM elsewhere (neither node nor lastnode hv1), another node's flush here.
      await vmOn(rig, 8, 'hv2');
      await vmOn(rig, 9, 'hv1');
      await rig.zk.write([[paths.domain(uuid(8)).failedReason, 'Flush of hv1: old'], [paths.domain(uuid(9)).failedReason, 'Flush of hv2: other'], [paths.domain(uuid(9)).state, 'stop']]);
      const f = daemons({ stepMs: 100, unmovable: { [uuid(1)]: 'no-target', [uuid(2)]: 'migration' } });
      const r = await rig.pvc(['node', 'flush', 'hv1', '--wait']);
      const flushedAt = f.at.get('hv1 domainstate flushed');
      assert.ok(flushedAt !== undefined && Date.now() - flushedAt < 2000, `flush --wait returned ${Date.now() - (flushedAt ?? 0)} ms after flushed`);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, 'Flushing node hv1: its VMs move to other nodes (domainstate flush)\n');
      const noTarget = FAKE_REASONS.noTarget('hv1', 'hv2');
      const gaveUp = FAKE_REASONS.gaveUp('hv1', 'hv2');
      assert.equal(r.stderr.split('\n').filter((l) => l.startsWith('pvc: ')).join('\n'),
        `pvc: flush hv1 failed: node hv1 is flushed, but 2 VMs could not be moved: vm1 (stop on hv1): ${JSON.stringify(noTarget)}; vm2 (start on hv1): ${JSON.stringify(gaveUp)}`);
      assert.match(r.stderr, /^flush hv1: 2 VMs still on hv1: vm2 \((start|migrate → hv2)\), vm3 \(start\)$/m);
      assert.deepEqual(await Promise.all([paths.domain(uuid(1)).state, paths.domain(uuid(1)).nodeAutostart].map((k) => rig.zk.read(k))), ['stop', 'True']);
      assert.equal(await rig.zk.read(paths.domain(uuid(3)).node), 'hv2');

      const info = await rig.pvc(['node', 'info', 'hv1']);
      assert.equal(info.code, 0, info.stderr);
      assert.match(info.stdout, /^Flush failures:\s+2: vm1, vm2$/m);
      assert.match(info.stdout, /^Not moved\s+State\s+Node\s+Failed reason$/m);
      assert.ok(info.stdout.split('\n').some((l) => /^vm1\s+stop\s+hv1\s+/.test(l) && l.endsWith(noTarget)), info.stdout);
      assert.ok(info.stdout.split('\n').some((l) => /^vm2\s+start\s+hv1\s+/.test(l) && l.endsWith(gaveUp)), info.stdout);
      assert.doesNotMatch(info.stdout, /vm8|vm9/);
      const json = JSON.parse(await rig.ok('node', 'info', 'hv1', '-f', 'json')) as { flushFailures: { name: string; state: string; node: string; reason: string }[] };
      assert.deepEqual(json.flushFailures.map((v) => [v.name, v.state, v.node, v.reason]), [['vm1', 'stop', 'hv1', noTarget], ['vm2', 'start', 'hv1', gaveUp]]);

      const back = await rig.pvc(['node', 'ready', 'hv1', '--wait']);
      assert.deepEqual([back.code, back.stdout], [0, 'Readying node hv1: its VMs come back (domainstate unflush)\nNode hv1 is ready\n'], back.stderr);
      assert.deepEqual((await rig.zk.read(paths.node('hv1').runningDomains))?.split(' ').sort(), [uuid(1), uuid(2), uuid(3)]);
      assert.deepEqual(await Promise.all([1, 2].map((i) => rig.zk.read(paths.domain(uuid(i)).failedReason))), ['', '']);
      assert.match(await rig.ok('node', 'info', 'hv1'), /^Flush failures:\s+none$/m);
    });

    it('--wait-timeout runs out (exit 4) when the node does not react; the daemon dying mid-flush is exit 1', async () => {
      daemons({ stall: 'flush' });
      const t = await rig.pvc(['node', 'flush', 'hv1', '--wait', '--wait-timeout', '1']);
      assert.equal(t.code, 4);
      assert.match(t.stderr, /^pvc: flush hv1: not done after 1 s \(last seen: 2 VMs still on hv1: vm1 \(start\), vm2 \(start\)\)$/m);
      assert.equal(await rig.zk.read(paths.node('hv1').domainState), 'flush');
      const back = await rig.pvc(['node', 'ready', 'hv1', '--wait']);
      assert.deepEqual([back.code, back.stdout], [0, 'Readying node hv1: its VMs come back (domainstate unflush)\nNode hv1 is ready\n'], 'ready works from a flush that never ended');
      fakes?.stop();
      await rig.zk.write([[paths.node('hv1').domainState, 'ready']]);
      daemons({ dieMidFlush: true });
      const d = await rig.pvc(['node', 'flush', 'hv1', '--wait']);
      assert.equal(d.code, 1);
      assert.match(d.stderr, /^pvc: flush hv1 failed: the daemon on hv1 is now dead$/m);
    });
  });

  describe('primary / secondary', () => {
    it('refuses hypervisors and nodes not running; "already" for the primary; nothing written', async () => {
      await rig.zk.write([[paths.node('hv3').daemonState, 'run']]);
      await rig.zk.write([[paths.node('hv2').daemonState, 'dead']]);
      const before = await versions(rig.zk);
      const hyp = await rig.pvc(['node', 'primary', 'hv3']);
      assert.deepEqual([hyp.code, hyp.stderr], [1, 'pvc: node hv3 is a hypervisor, not a coordinator: only coordinators hold the primary role\n']);
      const hypS = await rig.pvc(['node', 'secondary', 'hv3']);
      assert.equal(hypS.code, 1);
      const dead = await rig.pvc(['node', 'primary', 'hv2']);
      assert.deepEqual([dead.code, dead.stderr], [1, 'pvc: node hv2 cannot become primary: its daemon is "dead", not "run"\n']);
      const already = await rig.pvc(['node', 'primary', 'hv1', '--wait']);
      assert.deepEqual([already.code, already.stdout], [0, 'node hv1 is already primary\n']);
      const sec = await rig.pvc(['node', 'secondary', 'hv2']);
      assert.deepEqual([sec.code, sec.stdout], [0, 'node hv2 is already secondary (the primary is hv1)\n']);
      assert.deepEqual(await versions(rig.zk), before);
    });

    it('primary writes exactly /config/primary_node = node; --wait follows the lock-step handover', async () => {
      const plain = await versions(rig.zk);
      const f = daemons();
      const r = await rig.pvc(['node', 'primary', 'hv2', '--wait']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'Making node hv2 the primary coordinator (was hv1)\nNode hv2 is primary\n');
      assert.match(r.stderr, /^primary hv2: primary_node hv2; coordinators: hv1 (primary|relinquish|secondary), hv2 (secondary|takeover)$/m);
      assert.equal(await rig.zk.read(paths.config.primaryNode), 'hv2');
      assert.deepEqual(f.events, ['hv1 routerstate relinquish', 'hv1 routerstate secondary', 'hv2 routerstate takeover', 'hv2 routerstate primary']);
      assert.notEqual((await versions(rig.zk)).get(paths.config.primaryNode), plain.get(paths.config.primaryNode));
      assert.equal(await rig.ok('node', 'is-primary', 'hv2'), '');
    });

    it('secondary writes primary_node none; --wait until the node is secondary and another took over', async () => {
      const f = daemons();
      const r = await rig.pvc(['node', 'secondary', 'hv1', '-w']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'Releasing the primary role of node hv1 (primary_node none; another coordinator takes over)\nNode hv1 is secondary\n');
      assert.deepEqual(f.events.slice(0, 3), ['hv1 routerstate relinquish', 'hv1 routerstate secondary', 'hv2 claims primary_node']);
      assert.equal(await rig.zk.read(paths.node('hv1').routerState), 'secondary');
      assert.notEqual(await rig.zk.read(paths.config.primaryNode), 'hv1');
    });

    it('secondary without daemons leaves primary_node none; a hijacked or stalled handover is exit 1 / exit 4', async () => {
      assert.equal((await rig.pvc(['node', 'secondary', 'hv1'])).code, 0);
      assert.equal(await rig.zk.read(paths.config.primaryNode), 'none');
      await rig.zk.write([[paths.config.primaryNode, 'hv1']]);
      await rig.addNode('hv4');
      daemons({ hijackBy: 'hv4' });
      const h = await rig.pvc(['node', 'primary', 'hv2', '--wait']);
      assert.equal(h.code, 1);
      assert.match(h.stderr, /^pvc: primary hv2 failed: primary_node now names hv4$/m);
      fakes?.stop();
      await rig.zk.write([[paths.config.primaryNode, 'hv1'], [paths.node('hv1').routerState, 'primary'], [paths.node('hv4').routerState, 'secondary']]);
      daemons({ stall: 'handover' });
      const t = await rig.pvc(['node', 'primary', 'hv2', '--wait', '--wait-timeout', '1']);
      assert.equal(t.code, 4);
      assert.match(t.stderr, /^pvc: primary hv2: not done after 1 s \(last seen: primary_node hv2; coordinators: hv1 primary, hv2 secondary, hv4 secondary\)$/m);
    });
  });
});
