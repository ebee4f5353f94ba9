// `pvc vm define|modify|undefine|meta` against a real Zookeeper (vmd faked where a command waits on it).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { paths } from '@pvc/zk';
import { domainXml, useRig, type CliRig } from './support.js';
import { dumpTree, expectRefusedUnchanged, fakeVmd, rbdXml, setRunning, U1, U2 } from './vm-config-support.js';

describe('pvc vm define / modify / undefine / meta', () => {
  let rig: CliRig;
  const file = async (name: string, text: string): Promise<string> => {
    const p = join(rig.dir, name);
    await writeFile(p, text);
    return p;
  };
  /** Runs pvc, expects `code` and a one-line message matching `re`, and that /domains did not change. */
  const refusedUnchanged = (args: string[], code: number, re: RegExp): Promise<void> => expectRefusedUnchanged(rig, args, code, re);
  useRig((r) => (rig = r), async () => {
    await rig.addNode('hv1', { cpus: 8, memTotalMiB: 16384, memFreeMiB: 8000 });
    await rig.addNode('hv2', { cpus: 2, memTotalMiB: 4096, memFreeMiB: 3000 });
  });

  it('define writes every domain key in one object, with the options encoded as the original', async () => {
    const f = await file('vm1.xml', rbdXml('vm1', U1));
    const out = await rig.ok('vm', 'define', f, '-t', 'hv2', '-l', 'hv1,hv2', '-s', 'VCPUS', '--autostart', '-m', 'Live',
      '--migration-max-downtime', '500', '--tag', 'web', '--protected-tag', 'prod', '--profile', 'small');
    assert.match(out, /^Defined VM "vm1" \(state stop\)\nUUID: +0de30000-0000-4000-8000-000000000001\nNode: +hv2 \(given with --target\)\n$/);
    const t = await dumpTree(rig.zk, paths.domain(U1).root);
    const d = (k: string): string | undefined => t[`${paths.domain(U1).root}${k}`];
    assert.equal(d(''), 'vm1');
    assert.equal(d('/state'), 'stop');
    assert.equal(d('/node'), 'hv2');
    assert.equal(d('/lastnode'), '');
    assert.equal(d('/rbdlist'), 'vms/vm1_disk0,vms/vm1_disk1');
    assert.equal(d('/node_autostart'), 'True');
    assert.equal(d('/migration_method'), 'live');
    assert.equal(d('/migration_max_downtime'), '500');
    assert.equal(d('/node_limit'), 'hv1,hv2');
    assert.equal(d('/node_selector'), 'vcpus');
    assert.equal(d('/profile'), 'small');
    assert.deepEqual([d('/tags/web'), d('/tags/web/type'), d('/tags/web/protected')], ['web', 'user', 'False']);
    assert.deepEqual([d('/tags/prod'), d('/tags/prod/type'), d('/tags/prod/protected')], ['prod', 'user', 'True']);
    assert.match(d('/xml') ?? '', /<uuid>0de30000-0000-4000-8000-000000000001<\/uuid>/);
    for (const k of ['stats', 'failedreason', 'consolelog', 'vnc', 'migrate_sync_lock', 'snapshots']) assert.equal(d(`/${k}`), '', k);
  });

  it('define without <uuid> inserts a fresh one and says so; defaults; placement chooses the node; -f json', async () => {
    const f = await file('vm2.xml', domainXml('vm2', { memoryMiB: 512 }));
    const r = await rig.pvc(['vm', 'define', f, '-f', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { name: string; uuid: string; node: string; uuidGenerated: boolean; placement: string };
    assert.equal(j.name, 'vm2');
    assert.equal(j.uuidGenerated, true);
    assert.equal(j.node, 'hv1');
    assert.match(j.placement, /hv1 has the most free memory \(8000 MiB\) of 2 eligible nodes/);
    const d = paths.domain(j.uuid);
    assert.match((await rig.zk.read(d.xml)) ?? '', new RegExp(`<name>vm2</name>\\s*<uuid>${j.uuid}</uuid>`));
    assert.deepEqual(await Promise.all([d.nodeAutostart, d.migrationMethod, d.migrationMaxDowntime, d.nodeSelector, d.nodeLimit, d.profile, d.rbdList]
      .map((p) => rig.zk.read(p))), ['False', 'none', '300', 'none', '', 'None', '']);
    const human = await rig.ok('vm', 'define', await file('vm3.xml', domainXml('vm3', { mac: '52:54:00:00:00:03' })), '-l', 'hv2');
    assert.match(human, /UUID: +[0-9a-f-]{36} \(generated: the XML had no <uuid>; inserted into the stored XML\)\nNode: +hv2 \(hv2 has .* of the only eligible node\)/);
  });

  it('define refuses clashes and a VM that does not fit, writing nothing', async () => {
    await rig.ok('vm', 'define', await file('a.xml', domainXml('vm1', { uuid: U1 })), '-t', 'hv1');
    await refusedUnchanged(['vm', 'define', await file('b.xml', domainXml('vm1', { uuid: U2 }))], 1, /^pvc: a VM named "vm1" already exists \(UUID 0de30000-0000-4000-8000-000000000001\)$/m);
    await refusedUnchanged(['vm', 'define', await file('c.xml', domainXml('other', { uuid: U1.toUpperCase() }))], 1, /^pvc: UUID 0de30000-0000-4000-8000-000000000001 is already used by VM "vm1"$/m);
    const big = await file('big.xml', domainXml('big', { memoryMiB: 4096 }));
    await refusedUnchanged(['vm', 'define', big, '-t', 'hv2'], 1, /^pvc: cannot define VM big: 4096 MiB of memory is not below node hv2's total of 4096 MiB$/m);
    const cpus = await file('cpus.xml', domainXml('cpus', { vcpus: 2 }));
    await refusedUnchanged(['vm', 'define', cpus, '-t', 'hv2'], 1, /2 vCPUs exceed node hv2's limit of 1 \(2 CPUs, 1 kept for the host\)/);
    await refusedUnchanged(['vm', 'define', await file('c7.xml', domainXml('c7', { vcpus: 7 }))], 1,
      /^pvc: no node can take VM c7: hv1: 7 vCPUs exceed node hv1's limit of 6 \(8 CPUs, 2 kept for the host\); hv2: 7 vCPUs exceed/m);
    await rig.ok('vm', 'define', await file('one.xml', domainXml('one', { mac: '52:54:00:00:00:09' })), '-t', 'hv2');
  });

  it('define refuses bad targets and bad options (exit 1 for the cluster, 2 for input), writing nothing', async () => {
    const f = await file('ok.xml', domainXml('vm1', { uuid: U1 }));
    await refusedUnchanged(['vm', 'define', f, '-t', 'hv9'], 1, /^pvc: --target: no node named "hv9" \(nodes: hv1, hv2\)$/m);
    await rig.zk.write([[paths.node('hv2').daemonState, 'dead']]);
    await refusedUnchanged(['vm', 'define', f, '-t', 'hv2'], 1, /^pvc: --target: node hv2 is dead$/m);
    await refusedUnchanged(['vm', 'define', f, '-t', 'hv1', '-l', 'hv2'], 1, /^pvc: --target: node hv1 is not in --node-limit hv2$/m);
    await refusedUnchanged(['vm', 'define', f, '-l', 'hv1,hv7'], 2, /^pvc: --node-limit: "hv7" is not a node of the cluster \(nodes: hv1, hv2\)$/m);
    await refusedUnchanged(['vm', 'define', f, '-s', 'fastest'], 2, /^pvc: --node-selector: "fastest" is not one of mem, memprov, vcpus, load, vms, none$/m);
    await refusedUnchanged(['vm', 'define', f, '-m', 'teleport'], 2, /^pvc: --migration-method: "teleport" is not one of live, shutdown, none$/m);
    await refusedUnchanged(['vm', 'define', f, '--migration-max-downtime', '-5'], 2, /--migration-max-downtime: expected a positive whole number, got "-5"/);
    await refusedUnchanged(['vm', 'define', f, '--tag', 'a/b'], 2, /^pvc: tag "a\/b" is not a valid tag name/m);
    await rig.zk.write([[paths.node('hv1').domainState, 'flushed']]);
    await refusedUnchanged(['vm', 'define', f], 1, /^pvc: no node can take VM vm1: hv1: domain state flushed; hv2: daemon state dead$/m);
  });

  it('define refuses input files that are not a libvirt domain, writing nothing (exit 2)', async () => {
    const cases: [string, string, RegExp][] = [
      ['net.xml', '<network><name>n</name></network>', /net\.xml: not a libvirt domain XML: the root element is <network>, expected <domain>/],
      ['broken.xml', '<domain type="kvm"><name>x</name>', /broken\.xml: not well-formed XML/],
      ['mac.xml', domainXml('m', { mac: '52:54:00:zz:00:01' }), /mac\.xml: interface MAC address "52:54:00:zz:00:01" is malformed/],
      ['empty.xml', '', /empty\.xml: empty file/],
    ];
    for (const [name, text, re] of cases) await refusedUnchanged(['vm', 'define', await file(name, text)], 2, re);
    await refusedUnchanged(['vm', 'define', join(rig.dir, 'missing.xml')], 2, /^pvc: cannot read .*missing\.xml: .*ENOENT/m);
  });

  it('modify replaces the XML (UUID inserted, rbdlist recomputed, renamed when unique) and refuses bad XML', async () => {
    await rig.ok('vm', 'define', await file('a.xml', domainXml('vm1', { uuid: U1 })), '-t', 'hv1');
    await rig.ok('vm', 'define', await file('b.xml', domainXml('vm2', { uuid: U2, mac: '52:54:00:00:00:02' })), '-t', 'hv1');
    const out = await rig.ok('vm', 'modify', 'vm1', await file('m.xml', rbdXml('vm1new')));
    assert.match(out, /^Modified VM "vm1new" \(renamed from "vm1"\)\nVM "vm1new" is stop: the change applies when it next starts\n$/);
    const d = paths.domain(U1);
    assert.equal(await rig.zk.read(d.root), 'vm1new');
    assert.equal(await rig.zk.read(d.rbdList), 'vms/vm1_disk0,vms/vm1_disk1');
    assert.match((await rig.zk.read(d.xml)) ?? '', /<name>vm1new<\/name>\s*<uuid>0de30000-0000-4000-8000-000000000001<\/uuid>/);
    await refusedUnchanged(['vm', 'modify', 'vm1new', await file('u.xml', domainXml('vm1new', { uuid: U2 }))], 2, /<uuid> 0de30000-0000-4000-8000-000000000002 is not VM vm1new's UUID/);
    await refusedUnchanged(['vm', 'modify', 'vm1new', await file('n.xml', domainXml('vm2'))], 1, /^pvc: a VM named "vm2" already exists \(UUID 0de30000-0000-4000-8000-000000000002\)$/m);
    await refusedUnchanged(['vm', 'modify', 'vm1new', await file('big.xml', domainXml('vm1new', { memoryMiB: 20000 }))], 1, /^pvc: VM vm1new: 20000 MiB of memory is not below node hv1's total of 16384 MiB$/m);
    await refusedUnchanged(['vm', 'modify', 'vm1new', await file('bad.xml', '<domain')], 2, /bad\.xml: not well-formed XML/);
    await refusedUnchanged(['vm', 'modify', 'nosuch', await file('ok.xml', domainXml('x'))], 1, /^pvc: no VM named or with UUID "nosuch"$/m);
  });

  it('modify --restart restarts a running VM through its state; without it says when the change applies', async () => {
    await rig.ok('vm', 'define', await file('a.xml', domainXml('vm1', { uuid: U1 })), '-t', 'hv1');
    await setRunning(rig.zk, U1, 'hv1');
    const vmd = fakeVmd(rig.zk, U1, 'hv1');
    try {
      const quiet = await rig.ok('vm', 'modify', 'vm1', await file('m1.xml', domainXml('vm1', { memoryMiB: 300 })));
      assert.match(quiet, /VM "vm1" is running: the change applies at its next start \(or add --restart, or "pvc vm restart vm1"\)/);
      assert.equal(await rig.zk.read(paths.domain(U1).state), 'start');
      const out = await rig.ok('vm', 'modify', 'vm1', await file('m2.xml', domainXml('vm1', { memoryMiB: 400 })), '--restart', '--wait', '--wait-timeout', '10');
      assert.match(out, /Set VM "vm1" to restart \(was start\); done: start, node hv1, running on hv1/);
      assert.ok(vmd.seen.includes('restart'), vmd.seen.join(','));
      assert.match((await rig.zk.read(paths.domain(U1).xml)) ?? '', /<memory unit="MiB">400<\/memory>/);
    } finally {
      vmd.stop();
    }
  });

  it('undefine needs --yes; removes a stopped VM; stops a running one first and waits until no node runs it', async () => {
    await rig.ok('vm', 'define', await file('a.xml', domainXml('vm1', { uuid: U1 })), '-t', 'hv1');
    await rig.ok('vm', 'define', await file('b.xml', domainXml('vm2', { uuid: U2, mac: '52:54:00:00:00:02' })), '-t', 'hv1');
    await refusedUnchanged(['vm', 'undefine', 'vm1'], 2, /^pvc: vm undefine deletes VM "vm1" from the cluster: add --yes to confirm$/m);
    assert.match(await rig.ok('vm', 'undefine', 'vm1', '--yes'), /^Undefined VM "vm1" \(0de30000-0000-4000-8000-000000000001\)\n$/);
    assert.equal(await rig.zk.exists(paths.domain(U1).root), undefined);
    await setRunning(rig.zk, U2, 'hv1');
    const vmd = fakeVmd(rig.zk, U2, 'hv1', 300);
    try {
      const out = await rig.ok('vm', 'undefine', 'vm2', '-y');
      assert.match(out, /Set VM "vm2" to stop \(was start\); done: stop, node hv1, not running\nUndefined VM "vm2"/);
      assert.deepEqual(vmd.seen.slice(0, 2), ['start', 'stop']);
    } finally {
      vmd.stop();
    }
    assert.equal(await rig.zk.exists(paths.domain(U2).root), undefined);
    assert.equal(await rig.zk.read(paths.node('hv1').runningDomains), '');
  });

  it('undefine of a VM no daemon stops gives up after --wait-timeout (exit 4) and deletes nothing', async () => {
    await rig.ok('vm', 'define', await file('a.xml', domainXml('vm1', { uuid: U1 })), '-t', 'hv1');
    await setRunning(rig.zk, U1, 'hv1');
    const r = await rig.pvc(['vm', 'undefine', 'vm1', '--yes', '--wait-timeout', '1']);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /not done after 1 s \(last seen: stop, node hv1, running on hv1\)/);
    assert.equal(await rig.zk.read(paths.domain(U1).root), 'vm1');
  });

  it('meta sets each setting encoded as the original, in one go; -l "" clears; bad values write nothing', async () => {
    await rig.ok('vm', 'define', await file('a.xml', domainXml('vm1', { uuid: U1 })), '-t', 'hv1', '-l', 'hv1');
    const out = await rig.ok('vm', 'meta', 'vm1', '-l', 'hv2, hv1', '-s', 'MemProv', '--autostart', '-m', 'SHUTDOWN', '--migration-max-downtime', '1000', '--profile', 'p1');
    assert.match(out, /^Set node_limit=hv2,hv1, node_selector=memprov, node_autostart=True, migration_method=shutdown, migration_max_downtime=1000, profile=p1 on VM "vm1"\n$/);
    const d = paths.domain(U1);
    const keys = [d.nodeLimit, d.nodeSelector, d.nodeAutostart, d.migrationMethod, d.migrationMaxDowntime, d.profile];
    assert.deepEqual(await Promise.all(keys.map((k) => rig.zk.read(k))), ['hv2,hv1', 'memprov', 'True', 'shutdown', '1000', 'p1']);
    await rig.ok('vm', 'meta', 'vm1', '-l', '', '--no-autostart', '--profile', '');
    assert.deepEqual(await Promise.all(keys.map((k) => rig.zk.read(k))), ['', 'memprov', 'False', 'shutdown', '1000', 'None']);
    await refusedUnchanged(['vm', 'meta', 'vm1'], 2, /^pvc: vm meta: give at least one of/m);
    await refusedUnchanged(['vm', 'meta', 'vm1', '-l', 'hv1', '-s', 'bogus'], 2, /--node-selector: "bogus"/);
    await refusedUnchanged(['vm', 'meta', 'vm1', '-m', 'live', '-l', 'hv3,hv4'], 2, /--node-limit: "hv3", "hv4" are not nodes of the cluster/);
    await refusedUnchanged(['vm', 'meta', 'vm1', '--migration-max-downtime', '1.5'], 2, /got "1\.5"/);
    await refusedUnchanged(['vm', 'meta', 'ghost', '-s', 'mem'], 1, /no VM named or with UUID "ghost"/);
  });
});
