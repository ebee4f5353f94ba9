// `pvc vm tag|vcpu|memory ...` against a real Zookeeper (vmd faked for --restart).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { paths } from '@pvc/zk';
import { domainXml, useRig, type CliRig } from './support.js';
import { expectRefusedUnchanged, fakeVmd, setRunning, U1 } from './vm-config-support.js';

describe('pvc vm tag / vcpu / memory', () => {
  let rig: CliRig;
  const refusedUnchanged = (args: string[], code: number, re: RegExp): Promise<void> => expectRefusedUnchanged(rig, args, code, re);
  const define = async (xml: string): Promise<void> => {
    const f = join(rig.dir, 'vm.xml');
    await writeFile(f, xml);
    await rig.ok('vm', 'define', f, '-t', 'hv1');
  };
  useRig((r) => (rig = r), async () => {
    await rig.addNode('hv1', { cpus: 4, memTotalMiB: 8192 });
    await define(domainXml('vm1', { uuid: U1, memoryMiB: 512, vcpus: 1 }));
  });

  it('tag add / get / remove with the original keys; protected tags need --force to go', async () => {
    assert.equal(await rig.ok('vm', 'tag', 'add', 'vm1', 'web'), 'Added tag "web" on VM "vm1"\n');
    assert.equal(await rig.ok('vm', 'tag', 'add', 'vm1', 'prod', '--protected'), 'Added tag "prod" (protected) on VM "vm1"\n');
    const t = paths.domain(U1).tag('prod');
    assert.deepEqual(await Promise.all([t.root, `${t.root}/type`, t.protected].map((p) => rig.zk.read(p))), ['prod', 'user', 'True']);
    assert.equal(await rig.zk.read(paths.domain(U1).tag('web').protected), 'False');
    assert.equal(await rig.ok('vm', 'tag', 'get', 'vm1'), 'Tag   Type  Protected\nprod  user  yes\nweb   user  no\n');
    const j = JSON.parse(await rig.ok('vm', 'tag', 'get', U1, '-f', 'json')) as unknown;
    assert.deepEqual(j, { name: 'vm1', uuid: U1, tags: [{ name: 'prod', type: 'user', protected: true }, { name: 'web', type: 'user', protected: false }] });
    await refusedUnchanged(['vm', 'tag', 'remove', 'vm1', 'prod'], 1, /^pvc: tag "prod" of VM vm1 is protected: add --force to remove it$/m);
    await refusedUnchanged(['vm', 'tag', 'remove', 'vm1', 'nope'], 1, /^pvc: VM vm1 has no tag "nope"$/m);
    await refusedUnchanged(['vm', 'tag', 'add', 'vm1', 'a/b'], 2, /tag "a\/b" is not a valid tag name/);
    await refusedUnchanged(['vm', 'tag', 'add', 'ghost', 'x'], 1, /no VM named or with UUID "ghost"/);
    assert.equal(await rig.ok('vm', 'tag', 'remove', 'vm1', 'web'), 'Removed tag "web" from VM "vm1"\n');
    await rig.ok('vm', 'tag', 'remove', 'vm1', 'prod', '--force');
    assert.deepEqual(await rig.zk.children(paths.domain(U1).tags), []);
    assert.equal(await rig.ok('vm', 'tag', 'get', 'vm1'), 'VM "vm1" has no tags\n');
    await rig.ok('vm', 'tag', 'add', 'vm1', 'x', '-p');
    assert.equal(await rig.ok('vm', 'tag', 'add', 'vm1', 'x'), 'Updated tag "x" on VM "vm1"\n');
    assert.equal(await rig.zk.read(paths.domain(U1).tag('x').protected), 'False');
  });

  it('vcpu get/set edits <vcpu> in the stored XML within the node guard (4 CPUs → at most 2)', async () => {
    assert.equal(await rig.ok('vm', 'vcpu', 'get', 'vm1'), '1\n');
    const out = await rig.ok('vm', 'vcpu', 'set', 'vm1', '2');
    assert.equal(out, 'Set VM "vm1" to 2 vCPUs\nVM "vm1" is stop: the change applies when it next starts\n');
    assert.match((await rig.zk.read(paths.domain(U1).xml)) ?? '', /<vcpu>2<\/vcpu>/);
    assert.deepEqual(JSON.parse(await rig.ok('vm', 'vcpu', 'get', 'vm1', '-f', 'json')), { name: 'vm1', uuid: U1, vcpus: 2 });
    await refusedUnchanged(['vm', 'vcpu', 'set', 'vm1', '3'], 1, /^pvc: VM vm1: 3 vCPUs exceed node hv1's limit of 2 \(4 CPUs, 2 kept for the host\)$/m);
    await refusedUnchanged(['vm', 'vcpu', 'set', 'vm1', 'two'], 2, /vcpu count: expected a positive whole number, got "two"/);
    await refusedUnchanged(['vm', 'vcpu', 'set', 'vm1', '0'], 2, /got "0"/);
  });

  it('vcpu set refuses a count the XML\'s CPU topology does not give', async () => {
    await rig.ok('vm', 'undefine', 'vm1', '-y');
    await define(domainXml('vm1', { uuid: U1 }).replace('<vcpu>1</vcpu>', "<vcpu>2</vcpu><cpu><topology sockets='1' cores='2' threads='1'/></cpu>"));
    await refusedUnchanged(['vm', 'vcpu', 'set', 'vm1', '1'], 2, /<cpu><topology> \(1 sockets × 2 cores × 1 threads\) does not give 1 vCPUs/);
  });

  it('memory get/set edits <memory> in MiB within the node guard; --restart restarts a running VM', async () => {
    assert.equal(await rig.ok('vm', 'memory', 'get', 'vm1'), '512\n');
    await refusedUnchanged(['vm', 'memory', 'set', 'vm1', '8192'], 1, /^pvc: VM vm1: 8192 MiB of memory is not below node hv1's total of 8192 MiB$/m);
    await setRunning(rig.zk, U1, 'hv1');
    const vmd = fakeVmd(rig.zk, U1, 'hv1');
    try {
      const out = await rig.ok('vm', 'memory', 'set', 'vm1', '1024', '--restart');
      assert.match(out, /^Set VM "vm1" to 1024 MiB of memory\nSet VM "vm1" to restart \(was start\)\n$/);
      assert.match((await rig.zk.read(paths.domain(U1).xml)) ?? '', /<memory unit="MiB">1024<\/memory>/);
      assert.deepEqual(JSON.parse(await rig.ok('vm', 'memory', 'get', 'vm1', '-f', 'json')), { name: 'vm1', uuid: U1, memoryMiB: 1024 });
      const deadline = Date.now() + 5000;
      while (!vmd.seen.includes('restart') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(vmd.seen.includes('restart'), vmd.seen.join(','));
      const v = await rig.ok('vm', 'vcpu', 'set', 'vm1', '2', '-r', '-w', '--wait-timeout', '10');
      assert.match(v, /Set VM "vm1" to restart \(was start\); done: start, node hv1, running on hv1/);
    } finally {
      vmd.stop();
    }
  });
});
