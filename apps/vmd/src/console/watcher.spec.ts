import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock, silentLogger } from '@pvc/runtime';
import { newDomainObject, paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { DesiredVm, ObservedDomain } from '../model.js';
import { FakeConsoleFiles } from './files.js';
import { ConsoleWatcher } from './watcher.js';

const U1 = '00000001-1111-2222-3333-444444444444';
const U2 = '00000002-1111-2222-3333-444444444444';
const xmlWith = (log: string, vnc = ''): string =>
  `<domain><devices><serial type='pty'><log file='${log}'/></serial>${vnc}</devices></domain>`;

const desired = (uuid: string, name: string, node = 'hv1'): [string, DesiredVm] =>
  [uuid, { uuid, name, node, state: 'start', memoryMiB: 128 }];
const running = (uuid: string, name: string): [string, ObservedDomain] =>
  [uuid, { uuid, name, active: true, state: 'running', maxMemKiB: 1, memKiB: 1, vcpus: 1, cpuTimeNs: 0 }];

async function rig() {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  await zk.ensurePath(paths.domains);
  for (const [u, n] of [[U1, 'vm1'], [U2, 'vm2']] as const) {
    const d = newDomainObject({ uuid: u, name: n, xml: '<domain/>', node: 'hv1', state: 'start' });
    await zk.createObject(d.root, d.entries);
  }
  const files = new FakeConsoleFiles(() => clock.now());
  const xmls = new Map<string, string>([[U1, xmlWith('/l/vm1.log', "<graphics type='vnc' port='5900' listen='127.0.0.1'/>")]]);
  const dumps: string[] = [];
  const w = new ConsoleWatcher({
    zk, clock, logger: silentLogger(), files, node: 'hv1', lines: 2, consoleDir: '/var/log/pvc-console',
    liveXml: (u) => {
      dumps.push(u);
      const x = xmls.get(u);
      return x ? Promise.resolve(x) : Promise.reject(new Error('Domain not found'));
    },
  });
  return { clock, zk, files, w, dumps, read: async (u: string, k: 'consoleLog' | 'vnc') => zk.read(paths.domain(u)[k]) };
}

describe('ConsoleWatcher (virtual time)', () => {
  let r: Awaited<ReturnType<typeof rig>>;
  after(async () => {
    await r.w.stop();
    await r.zk.close();
  });

  it('follows a running VM: vnc from the live XML, the last lines every 0.5 s, only VMs assigned here', async () => {
    r = await rig();
    r.files.append('/l/vm1.log', 'boot\n');
    const d = new Map([desired(U1, 'vm1'), desired(U2, 'vm2', 'hv2')]);
    r.w.sync(d, new Map([running(U1, 'vm1'), running(U2, 'vm2')]));
    await r.clock.advance(10);
    assert.deepEqual(r.w.followed(), [U1], 'vm2 is assigned to hv2');
    assert.equal(await r.read(U1, 'vnc'), '127.0.0.1:5900');
    assert.equal(await r.read(U1, 'consoleLog'), 'boot');
    r.files.append('/l/vm1.log', 'tick 1\ntick 2\n');
    await r.clock.advance(400);
    assert.equal(await r.read(U1, 'consoleLog'), 'boot', 'not before the next 0.5 s poll');
    await r.clock.advance(200);
    assert.equal(await r.read(U1, 'consoleLog'), 'tick 1\ntick 2');
    r.w.sync(d, new Map([running(U1, 'vm1'), running(U2, 'vm2')]));
    assert.deepEqual(r.dumps, [U1], 'live XML read once per run');
  });

  it('VM stops → last poll, follower dropped, vnc cleared; unreadable live XML → default path, vnc ""', async () => {
    r.files.append('/l/vm1.log', 'power off\n');
    const d = new Map([desired(U1, 'vm1'), desired(U2, 'vm2')]);
    r.w.sync(d, new Map([running(U2, 'vm2')]));
    await r.clock.advance(10);
    assert.deepEqual(r.w.followed(), [U2]);
    assert.equal(await r.read(U1, 'consoleLog'), 'tick 2\npower off');
    assert.equal(await r.read(U1, 'vnc'), '');
    r.files.append('/var/log/pvc-console/vm2.log', 'hello from vm2\n');
    await r.clock.advance(600);
    assert.equal(await r.read(U2, 'consoleLog'), 'hello from vm2');
    assert.equal(await r.read(U2, 'vnc'), '');
  });
});
