// `pvc vm list|info|dump|log` against a real Zookeeper, including bad data in the tree.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newDomainObject, paths } from '@pvc/zk';
import { domainXml, useRig, type CliRig } from './support.js';
import { waitUntil } from '../../support/wait.js';

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';
const U3 = '33333333-3333-4333-8333-333333333333';

describe('pvc vm list/info/dump/log', () => {
  let rig: CliRig;
  useRig((r) => (rig = r), async () => {
    for (const n of ['hv1', 'hv2']) await rig.addNode(n);
    const web = newDomainObject({
      uuid: U1, name: 'web', xml: domainXml('web', { uuid: U1, memoryMiB: 512, vcpus: 2 }), node: 'hv1', state: 'start', autostart: true,
      tags: [{ name: 'prod', type: 'user', protected: false }],
    });
    const db = newDomainObject({ uuid: U2, name: 'db', xml: domainXml('db', { uuid: U2 }), node: 'hv2', state: 'stop' });
    for (const o of [web, db]) await rig.zk.createObject(o.root, o.entries);
    await rig.zk.write([[paths.node('hv1').runningDomains, U1], [paths.domain(U1).lastNode, 'hv2'], [paths.domain(U1).vnc, '127.0.0.1:5900']]);
  });

  async function addBroken(): Promise<void> {
    const bad = newDomainObject({ uuid: U3, name: 'broken', xml: '<domain type="qemu"><name>broken', node: 'hv1', state: 'stop' });
    await rig.zk.createObject(bad.root, bad.entries);
    await rig.zk.write([[paths.domain(U3).migrationMaxDowntime, 'lots'], [paths.domain(U3).stats, '{not json']]);
    await rig.zk.delete(paths.domain(U3).state);
  }

  it('list: a table with every column, sorted by name', async () => {
    const out = await rig.ok('vm', 'list');
    const lines = out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^Name\s+UUID\s+State\s+Node\s+Migrated\s+vCPUs\s+Memory\s+Tags\s+Autostart$/);
    assert.match(lines[1] ?? '', new RegExp(`^db\\s+${U2}\\s+stop\\s+hv2\\s+no\\s+1\\s+256 MiB\\s+-\\s+no$`));
    assert.match(lines[2] ?? '', new RegExp(`^web\\s+${U1}\\s+start\\s+hv1\\s+from hv2\\s+2\\s+512 MiB\\s+prod\\s+yes$`));
    assert.equal(lines.length, 3);
  });

  it('list filters: node, state, tag, negate, limit, raw; JSON has the fields', async () => {
    assert.equal(await rig.ok('vm', 'list', '--node', 'hv2', '-r'), 'db\n');
    assert.equal(await rig.ok('vm', 'list', '-t', 'hv2', '-n', '-r'), 'web\n');
    assert.equal(await rig.ok('vm', 'list', '-s', 'start', '-r'), 'web\n');
    assert.equal(await rig.ok('vm', 'list', '-g', 'prod', '-n', '-r'), 'db\n');
    assert.equal(await rig.ok('vm', 'list', '^w', '-r'), 'web\n');
    const none = await rig.pvc(['vm', 'list', '-s', 'fail']);
    assert.equal(none.code, 0);
    assert.equal(none.stderr, 'No VMs match.\n');
    const json = JSON.parse(await rig.ok('vm', 'list', '-f', 'json')) as Record<string, unknown>[];
    assert.deepEqual(json.map((v) => v.name), ['db', 'web']);
    assert.deepEqual(
      { state: json[1]?.state, node: json[1]?.node, lastNode: json[1]?.lastNode, vcpus: json[1]?.vcpus, memoryMiB: json[1]?.memoryMiB, autostart: json[1]?.autostart },
      { state: 'start', node: 'hv1', lastNode: 'hv2', vcpus: 2, memoryMiB: 512, autostart: true },
    );
  });

  it('list and info survive bad data: unparsable XML, non-numeric values, bad stats JSON', async () => {
    await addBroken();
    const r = await rig.pvc(['vm', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`broken\\(!\\)\\s+${U3}\\s+-\\s+hv1\\s+no\\s+\\?\\s+\\?`));
    assert.match(r.stderr, new RegExp(`broken \\(${U3}\\): cannot read the VM's size: no readable <memory> in /domains/${U3}/xml`));
    assert.match(r.stderr, new RegExp(`broken \\(${U3}\\): bad value in Zookeeper at /domains/${U3}/migration_max_downtime: "lots" is not an integer`));
    const info = await rig.pvc(['vm', 'info', 'broken']);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /Problem: bad value in Zookeeper at .*\/stats: "\{not json" is not JSON/);
    assert.match(info.stdout, /State:\s+-/);
    assert.match(info.stdout, /vCPUs:\s+-/);
    const json = JSON.parse(await rig.ok('vm', 'info', 'broken', '-f', 'json')) as { problems: string[]; vcpus: unknown; stats: unknown };
    assert.equal(json.vcpus, null);
    assert.equal(json.stats, null);
    assert.equal(json.problems.length, 4);
    assert.ok(json.problems.some((p) => p.endsWith('/state is missing')), json.problems.join('; '));
  });

  it('info: state, node, where it runs, failed reason, VNC, stats; --long and JSON', async () => {
    await rig.zk.write([
      [paths.domain(U1).failedReason, 'Migration to hv2 failed: peer refused'],
      [paths.domain(U1).stats, JSON.stringify({ state: 1, maxmem: 524288, livemem: 262144, cpus: 2, cputime: 12_500_000_000, disk_stats: [], net_stats: [] })],
      [paths.domain(U1).consoleLog, 'one\ntwo\n'],
    ]);
    const out = await rig.ok('vm', 'info', 'web');
    for (const re of [/State:\s+start/, /Node:\s+hv1/, /Migrated:\s+from hv2/, /Running on:\s+hv1/, /Failed reason:\s+Migration to hv2 failed: peer refused/,
      /VNC:\s+127\.0\.0\.1:5900/, /Live memory:\s+256 of 512 MiB/, /CPU time:\s+12\.5 s/, /Tags:\s+prod/]) assert.match(out, re);
    assert.doesNotMatch(out, /Console log/);
    const long = await rig.ok('vm', 'info', U1, '--long');
    assert.match(long, /Console log:\s+2 lines/);
    assert.match(long, /MACs:\s+52:54:00:00:00:01/);
    const json = JSON.parse(await rig.ok('vm', 'info', 'web', '-f', 'json')) as Record<string, unknown>;
    assert.deepEqual(json.runningOn, ['hv1']);
    assert.equal(json.failedReason, 'Migration to hv2 failed: peer refused');
    assert.equal((json.stats as { liveMemMiB: number }).liveMemMiB, 256);
  });

  it('dump prints the stored XML as it is; unknown VM exit 1', async () => {
    assert.equal(await rig.ok('vm', 'dump', 'web'), domainXml('web', { uuid: U1, memoryMiB: 512, vcpus: 2 }));
    const json = JSON.parse(await rig.ok('vm', 'dump', 'db', '-f', 'json')) as { xml: string };
    assert.equal(json.xml, domainXml('db', { uuid: U2 }));
    const r = await rig.pvc(['vm', 'dump', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'pvc: no VM named or with UUID "nope"\n');
  });

  it('log -l N prints the last lines; JSON; bad --lines is a usage error', async () => {
    await rig.zk.write([[paths.domain(U1).consoleLog, 'a\nb\nc\nd\n']]);
    assert.equal(await rig.ok('vm', 'log', 'web', '-l', '2'), 'c\nd\n');
    assert.equal(await rig.ok('vm', 'log', 'web'), 'a\nb\nc\nd\n');
    assert.deepEqual((JSON.parse(await rig.ok('vm', 'log', 'web', '-f', 'json', '-l', '1')) as { lines: string[] }).lines, ['d']);
    const bad = await rig.pvc(['vm', 'log', 'web', '-l', 'many']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--lines: expected a whole number ≥ 0, got "many"/);
  });

  it('log --follow prints only new lines as the sliding window moves, until aborted', async () => {
    await rig.zk.write([[paths.domain(U1).consoleLog, 'a\nb\nc\n']]);
    const abort = new AbortController();
    const run = rig.pvcLive(['vm', 'log', 'web', '--follow', '-l', '1'], { signal: abort.signal });
    const shown = (text: string): Promise<unknown> => waitUntil(() => run.output().endsWith(text), { what: `vm log --follow printing ${JSON.stringify(text)}`, timeoutMs: 10_000 });
    await shown('c\n');
    await rig.zk.write([[paths.domain(U1).consoleLog, 'b\nc\nd\n']]);
    await shown('d\n');
    await rig.zk.write([[paths.domain(U1).consoleLog, 'd\ne\nf\n']]);
    await shown('f\n');
    abort.abort();
    const r = await run.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'c\nd\ne\nf\n');
  });
});
