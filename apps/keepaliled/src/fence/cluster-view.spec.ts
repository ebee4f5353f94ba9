import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { domainSize, readDomainsOn, readNode, readNodes } from './cluster-view.js';
import { memoryLogger } from '../testing/fakes.js';
import { seedBase, seedDomain, seedNode } from '../testing/cluster.js';

const mem = (inner: string): string => `<domain><name>vm1</name>${inner}<vcpu>2</vcpu></domain>`;

test('domainSize: memory in KiB when no unit is given (libvirt default)', () => {
  assert.deepEqual(domainSize(mem('<memory>1048576</memory>')), { memoryMiB: 1024, vcpus: 2, name: 'vm1' });
});

test('domainSize: units KiB, k, MiB, M, GiB, G, bytes, b, KB (decimal), rounded up to a whole MiB', () => {
  const cases: [string, number][] = [
    [`<memory unit='KiB'>2097152</memory>`, 2048],
    [`<memory unit="k">1024</memory>`, 1],
    [`<memory unit='MiB'>512</memory>`, 512],
    [`<memory unit='M'>3000</memory>`, 3000],
    [`<memory unit='GiB'>4</memory>`, 4096],
    [`<memory unit='G'>1</memory>`, 1024],
    [`<memory unit='bytes'>1073741824</memory>`, 1024],
    [`<memory unit='b'>1048577</memory>`, 2],
    [`<memory unit='KB'>1000000</memory>`, 954],
  ];
  for (const [xml, want] of cases) assert.equal(domainSize(mem(xml)).memoryMiB, want, xml);
});

test('domainSize: currentMemory, maxMemory and a numatune <memory/> are not the memory size', () => {
  const xml = `<domain><name>x</name><maxMemory slots='16' unit='GiB'>64</maxMemory>
    <numatune><memory mode='strict' nodeset='0'/></numatune>
    <memory unit='MiB'>2048</memory><currentMemory unit='MiB'>1024</currentMemory><vcpu placement='static' current='2'>4</vcpu></domain>`;
  assert.deepEqual(domainSize(xml), { memoryMiB: 2048, vcpus: 4, name: 'x' });
});

test('domainSize: missing or unreadable parts are left out, never guessed', () => {
  assert.deepEqual(domainSize(''), {});
  assert.deepEqual(domainSize('<domain><name>only-name</name></domain>'), { name: 'only-name' });
  assert.deepEqual(domainSize(`<domain><memory unit='furlongs'>4</memory><vcpu>1</vcpu></domain>`), { vcpus: 1 });
  assert.deepEqual(domainSize(`<domain><memory unit='MiB'>lots</memory></domain>`), {});
});

test('domainSize: the unit is read when it is not the first attribute', () => {
  assert.equal(domainSize(mem(`<memory dumpCore='off' unit='GiB'>4</memory>`)).memoryMiB, 4096);
});

async function zkWithCluster(): Promise<{ zk: Awaited<ReturnType<FakeZkServer['connect']>>; clock: VirtualClock }> {
  const clock = new VirtualClock(1_700_000_000_000);
  const zk = await new FakeZkServer({ clock }).connect();
  await seedBase(zk);
  return { zk, clock };
}

test('readNode: states, IPMI details, running domains and figures of a node', async () => {
  const { zk, clock } = await zkWithCluster();
  await seedNode(zk, clock.now(), { name: 'hv1', mode: 'coordinator', runningDomains: ['u1', 'u2'], memFreeMiB: 1000, cpus: 16 });
  await zk.write([[paths.node('hv1').cpuLoad, '1.25']]);
  const { logger, lines } = memoryLogger();
  const rec = await readNode(zk, logger, 'hv1');
  assert.ok(rec);
  assert.equal(rec.daemonState, 'run');
  assert.equal(rec.routerState, 'secondary');
  assert.equal(rec.daemonMode, 'coordinator');
  assert.deepEqual(rec.runningDomains, ['u1', 'u2']);
  assert.deepEqual(rec.ipmi, { host: 'hv1-bmc', user: 'admin', pass: 'secret-hv1' });
  assert.equal(rec.facts.memFreeMiB, 1000);
  assert.equal(rec.facts.cpuLoad, 1.25);
  assert.equal(rec.facts.staticCpus, 16);
  assert.equal(lines.length, 0);
  assert.equal(await readNode(zk, logger, 'nope'), undefined);
});

test('readNode: garbage numbers read as 0 with one log line naming each key; "0" running list is empty', async () => {
  const { zk, clock } = await zkWithCluster();
  await seedNode(zk, clock.now(), { name: 'hv2' });
  const k = paths.node('hv2');
  await zk.write([[k.memFree, 'lots'], [k.cpuLoad, '1,5'], [k.vcpuAlloc, 'None'], [k.staticData, 'garbage'], [k.runningDomains, '0']]);
  const { logger, lines } = memoryLogger();
  const rec = await readNode(zk, logger, 'hv2');
  assert.ok(rec);
  assert.equal(rec.facts.memFreeMiB, 0);
  assert.equal(rec.facts.cpuLoad, 0);
  assert.equal(rec.facts.vcpuAlloc, 0);
  assert.equal(rec.facts.memTotalMiB, 32_768, 'good figures are still read');
  assert.equal(rec.facts.staticCpus, undefined);
  assert.deepEqual(rec.runningDomains, []);
  const warned = lines.filter((l) => l.msg === 'not a number in ZK; using 0').map((l) => [l['key'], l['value']]);
  assert.deepEqual(warned.sort(), [[k.cpuLoad, '1,5'], [k.memFree, 'lots'], [k.vcpuAlloc, 'None']].sort());
});

test('readNodes: every node under /nodes, sorted by name', async () => {
  const { zk, clock } = await zkWithCluster();
  for (const name of ['hv3', 'hv1', 'hv2']) await seedNode(zk, clock.now(), { name });
  const { logger } = memoryLogger();
  assert.deepEqual((await readNodes(zk, logger)).map((n) => n.name), ['hv1', 'hv2', 'hv3']);
});

test('readDomainsOn: only VMs whose node is the given node; RBD list parsed; unreadable XML logged and sized 1 MiB', async () => {
  const { zk } = await zkWithCluster();
  await seedDomain(zk, { uuid: 'a1', name: 'web', node: 'hv1', memoryMiB: 2048, vcpus: 4, rbdList: ['vms/web_disk0', 'vms/web_disk1'] });
  await seedDomain(zk, { uuid: 'b2', name: 'db', node: 'hv2' });
  await seedDomain(zk, { uuid: 'c3', name: 'broken', node: 'hv1', state: 'stop' });
  await zk.write([[paths.domain('c3').xml, '<domain>no sizes</domain>']]);
  const { logger, lines } = memoryLogger();
  const vms = await readDomainsOn(zk, logger, 'hv1');
  assert.deepEqual(vms.map((v) => [v.uuid, v.name, v.state, v.memoryMiB, v.vcpus, v.rbdList]), [
    ['a1', 'web', 'start', 2048, 4, ['vms/web_disk0', 'vms/web_disk1']],
    ['c3', 'c3', 'stop', 1, 1, []],
  ]);
  const warn = lines.find((l) => /cannot read the memory size/.test(l.msg));
  assert.equal(warn?.['key'], paths.domain('c3').xml);
});
