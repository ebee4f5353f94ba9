import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { domainXmlFacts, paths, readAllNodeFigures, readNodeRecord, resetBadValueReports } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { readDomainsOn } from './cluster-view.js';
import { memoryLogger } from '../testing/fakes.js';
import { seedBase, seedDomain, seedNode } from '../testing/cluster.js';

// The fencer reads nodes and VMs through @pvc/zk's shared readers (readNodeRecord, readAllNodeFigures,
// readVmFacts, domainXmlFacts); these tests pin what fencing and recovery rely on from them.
const domainSize = domainXmlFacts;
const mem = (inner: string): string => `<domain><name>vm1</name>${inner}<vcpu>2</vcpu></domain>`;

test('domainSize: memory in KiB when no unit is given (libvirt default)', () => {
  assert.deepEqual(domainSize(mem('<memory>1048576</memory>')), { memoryMiB: 1024, vcpus: 2, name: 'vm1', networks: [] });
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
  assert.deepEqual(domainSize(xml), { memoryMiB: 2048, vcpus: 4, name: 'x', networks: [] });
});

test('domainSize: missing or unreadable parts are left out, never guessed', () => {
  assert.deepEqual(domainSize(''), { networks: [] });
  assert.deepEqual(domainSize('<domain><name>only-name</name></domain>'), { name: 'only-name', networks: [] });
  assert.deepEqual(domainSize(`<domain><memory unit='furlongs'>4</memory><vcpu>1</vcpu></domain>`), { vcpus: 1, networks: [] });
  assert.deepEqual(domainSize(`<domain><memory unit='MiB'>lots</memory></domain>`), { networks: [] });
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

test('readNodeRecord: states, IPMI details, running domains and figures of a node', async () => {
  const { zk, clock } = await zkWithCluster();
  await seedNode(zk, clock.now(), { name: 'hv1', mode: 'coordinator', runningDomains: ['u1', 'u2'], memFreeMiB: 1000, cpus: 16 });
  await zk.write([[paths.node('hv1').cpuLoad, '1.25']]);
  const { logger, lines } = memoryLogger();
  const rec = await readNodeRecord(zk, 'hv1', logger);
  assert.ok(rec);
  assert.equal(rec.daemonState, 'run');
  assert.equal(rec.routerState, 'secondary');
  assert.equal(rec.daemonMode, 'coordinator');
  assert.deepEqual(rec.runningDomains, ['u1', 'u2']);
  assert.deepEqual(rec.ipmi, { host: 'hv1-bmc', user: 'admin', pass: 'secret-hv1' });
  assert.equal(rec.figures.memFreeMiB, 1000);
  assert.equal(rec.figures.cpuLoad, 1.25);
  assert.equal(rec.figures.staticCpus, 16);
  assert.equal(lines.length, 0);
  assert.equal(await readNodeRecord(zk, 'nope', logger), undefined);
});

test('readNodeRecord: garbage figures and states read as their default with one log line naming each key; "0" running list is empty', async () => {
  resetBadValueReports();
  const { zk, clock } = await zkWithCluster();
  await seedNode(zk, clock.now(), { name: 'hv2' });
  const k = paths.node('hv2');
  await zk.write([[k.memFree, 'lots'], [k.cpuLoad, '1,5'], [k.vcpuAlloc, 'None'], [k.staticData, 'garbage'], [k.runningDomains, '0'], [k.daemonState, 'zombie']]);
  const { logger, lines } = memoryLogger();
  const rec = await readNodeRecord(zk, 'hv2', logger);
  assert.ok(rec);
  assert.equal(rec.figures.memFreeMiB, 0);
  assert.equal(rec.figures.cpuLoad, 0);
  assert.equal(rec.figures.vcpuAlloc, 0);
  assert.equal(rec.figures.memTotalMiB, 32_768, 'good figures are still read');
  assert.equal(rec.figures.staticCpus, undefined);
  assert.deepEqual(rec.runningDomains, []);
  assert.equal(rec.daemonState, undefined, 'an unknown state is unknown: the fencer does not act on it');
  const warned = lines.filter((l) => /^bad value in Zookeeper/.test(l.msg)).map((l) => [l['key'], l['value']]);
  assert.deepEqual(warned.sort(), [[k.cpuLoad, '1,5'], [k.daemonState, 'zombie'], [k.memFree, 'lots'], [k.staticData, 'garbage'], [k.vcpuAlloc, 'None']].sort());
});

test('readAllNodeFigures: every node under /nodes, sorted by name (the recovery\'s placement facts)', async () => {
  const { zk, clock } = await zkWithCluster();
  for (const name of ['hv3', 'hv1', 'hv2']) await seedNode(zk, clock.now(), { name });
  const { logger } = memoryLogger();
  assert.deepEqual((await readAllNodeFigures(zk, logger)).map((n) => n.name), ['hv1', 'hv2', 'hv3']);
});

test('readDomainsOn: only VMs whose node is the given node; RBD list and node limit as arrays (None dropped); unreadable XML logged and sized 1 MiB', async () => {
  const { zk } = await zkWithCluster();
  await seedDomain(zk, { uuid: 'a1', name: 'web', node: 'hv1', memoryMiB: 2048, vcpus: 4, rbdList: ['vms/web_disk0', 'vms/web_disk1'], nodeLimit: ['hv2', 'hv3'] });
  await seedDomain(zk, { uuid: 'b2', name: 'db', node: 'hv2' });
  await seedDomain(zk, { uuid: 'c3', name: 'broken', node: 'hv1', state: 'stop' });
  await zk.write([[paths.domain('c3').xml, '<domain>no sizes</domain>'], [paths.domain('c3').rbdList, 'None'], [paths.domain('c3').nodeLimit, 'None']]);
  const { logger, lines } = memoryLogger();
  const vms = await readDomainsOn(zk, logger, 'hv1');
  assert.deepEqual(vms.map((v) => [v.uuid, v.name, v.state, v.memoryMiB, v.vcpus, v.rbdList, v.nodeLimit]), [
    ['a1', 'web', 'start', 2048, 4, ['vms/web_disk0', 'vms/web_disk1'], ['hv2', 'hv3']],
    ['c3', 'broken', 'stop', 1, 1, [], []],
  ]);
  const warn = lines.find((l) => /cannot read the memory size/.test(l.msg));
  assert.equal(warn?.['key'], paths.domain('c3').xml);
});
