import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeExec, silentLogger } from '@pvc/runtime';
import { createSystemServices } from '../host/system-services.js';
import { resolveRunOptions } from '../options.js';
import { FakeServices, fakeWorld, testConfig } from '../testing.js';
import { bringUpDependentServices, planDependentServices } from './coordinator-services.js';

test('plan: a coordinator with everything gets ZK, libvirtd, Ceph mon/mgr, FRR and PostgreSQL; a hypervisor only libvirtd', () => {
  const coord = planDependentServices(testConfig(['pvc.database', { zookeeper: { port: 2281 } }]));
  assert.deepEqual(coord.map((s) => s.unit), ['zookeeper.service', 'libvirtd.service', 'ceph-mon@pvchv1.service', 'ceph-mgr@pvchv1.service', 'frr.service', 'patroni.service']);
  assert.deepEqual(coord[0]?.probe, { kind: 'zookeeper', host: 'pvchv1', port: 2281 });
  assert.deepEqual(coord[5]?.probe, { kind: 'postgresql', targets: [{ host: 'localhost', port: 5432 }] });
  const hv = planDependentServices(testConfig(['pvc.node', 'hv9']));
  assert.deepEqual(hv.map((s) => s.name), ['libvirtd']);
  const bare = planDependentServices(testConfig(['pvc.functions.enable_storage', false], ['pvc.functions.enable_hypervisor', false]));
  assert.deepEqual(bare.map((s) => s.name), ['zookeeper', 'frr', 'postgresql']);
});

test('bring-up: units started, then each probe polled until ready (no fixed sleep); external: only probes', async () => {
  const { clock } = fakeWorld(testConfig());
  const plan = planDependentServices(testConfig());
  for (const external of [false, true]) {
    const services = new FakeServices(clock);
    const start = clock.now();
    services.readyAt.zookeeper = start + 700;
    services.readyAt['ceph-mon'] = start + 1_500;
    const p = bringUpDependentServices(plan, { services, clock, logger: silentLogger(), external, timeoutMs: 60_000, signal: new AbortController().signal });
    await clock.advance(5_000);
    const r = await p;
    assert.deepEqual(services.started, external ? [] : plan.map((s) => s.unit));
    assert.ok(r.every((x) => x.ready));
    const zk = r.find((x) => x.name === 'zookeeper')?.waitedMs ?? -1;
    const mon = r.find((x) => x.name === 'ceph-mon')?.waitedMs ?? -1;
    assert.ok(zk >= 700 && zk <= 750 + 400, `zookeeper noticed after ${zk} ms`);
    assert.ok(mon >= 1_500 && mon <= 1_500 + 1000, `ceph-mon noticed after ${mon} ms`);
    assert.equal(r.find((x) => x.name === 'frr')?.waitedMs, 0);
  }
});

test('bring-up: a service that never becomes ready is reported after the bound; bring-up goes on', async () => {
  const { clock, lines, deps } = fakeWorld(testConfig());
  const services = new FakeServices(clock);
  services.readyAt.frr = Number.MAX_SAFE_INTEGER;
  const p = bringUpDependentServices(planDependentServices(testConfig()), { services, clock, logger: deps.logger, external: true, timeoutMs: 10_000, signal: new AbortController().signal });
  await clock.advance(12_000);
  const r = await p;
  assert.deepEqual(r.filter((x) => !x.ready).map((x) => x.name), ['frr']);
  const err = lines.find((l) => l.msg === 'frr did not become ready in time');
  assert.equal(err?.unit, 'frr.service');
  assert.equal(err?.last, 'not yet');
});

test('real SystemServices over FakeExec: systemctl start, pg_isready, vtysh, ceph probes and their failures', async () => {
  const exec = new FakeExec()
    .on('systemctl start frr.service', { exitCode: 0 })
    .on('systemctl start patroni.service', { exitCode: 5, stderr: 'Failed to start patroni.service: Unit patroni.service not found.\n' })
    .on('pg_isready -h localhost -p 5432', { exitCode: 0, stdout: 'localhost:5432 - accepting connections\n' })
    .on('pg_isready -h db2 -p 5433', { exitCode: 2, stdout: 'db2:5433 - no response\n' })
    .on('vtysh -c show version', { exitCode: 0, stdout: 'FRRouting 8.4.4\n' })
    .on('ceph --connect-timeout 3 mon stat', { exitCode: 0, stdout: 'e1: 3 mons at ...\n' })
    .on('ceph --connect-timeout 3 mgr stat', { exitCode: 0, stdout: '{"epoch":5,"available":false,"active_name":""}\n' });
  const s = createSystemServices(exec);
  await s.start('frr.service');
  await assert.rejects(s.start('patroni.service'), /systemctl start patroni.service: exit 5: Failed to start patroni.service: Unit patroni.service not found\./);
  assert.deepEqual(await s.probe({ kind: 'postgresql', targets: [{ host: 'localhost', port: 5432 }] }), { ready: true, detail: 'accepting connections' });
  const pg = await s.probe({ kind: 'postgresql', targets: [{ host: 'localhost', port: 5432 }, { host: 'db2', port: 5433 }] });
  assert.equal(pg.ready, false);
  assert.match(pg.detail, /pg_isready -h db2 -p 5433 -t 2: exit 2: db2:5433 - no response/);
  assert.equal((await s.probe({ kind: 'frr' })).ready, true);
  assert.equal((await s.probe({ kind: 'ceph-mon' })).ready, true);
  assert.equal((await s.probe({ kind: 'ceph-mgr' })).ready, false, 'a mgr that is not available is not ready');
  assert.equal((await s.probe({ kind: 'libvirt', uri: 'qemu:///system' })).ready, false, 'unknown command (127) is not ready');
});

test('real SystemServices with a systemctl-compatible program (the test cluster\'s shim): it is run instead of systemctl, its failure named', async () => {
  const exec = new FakeExec()
    .on('/h/bin/systemctl start ceph-mon@hv1.service', { exitCode: 0 })
    .on('/h/bin/systemctl start ceph-mgr@hv1.service', { exitCode: 5, stderr: 'Unit ceph-mgr@hv1.service not found.\n' });
  const s = createSystemServices(exec, { systemctl: '/h/bin/systemctl' });
  await s.start('ceph-mon@hv1.service');
  await assert.rejects(s.start('ceph-mgr@hv1.service'), /\/h\/bin\/systemctl start ceph-mgr@hv1.service: exit 5: Unit ceph-mgr@hv1.service not found\./);
  assert.deepEqual(exec.calls.map((c) => [c.command, ...c.args].join(' ')), ['/h/bin/systemctl start ceph-mon@hv1.service', '/h/bin/systemctl start ceph-mgr@hv1.service']);
});

test('bring-up through the real port: without external services every planned unit is started with the configured program, then probed', async () => {
  const exec = new FakeExec()
    .on('/shim start zookeeper.service', { exitCode: 0 })
    .on('/shim start ceph-mon@pvchv1.service', { exitCode: 0 })
    .on('/shim start ceph-mgr@pvchv1.service', { exitCode: 0 })
    .on('ceph --connect-timeout 3 mon stat', { exitCode: 0, stdout: 'e1: 3 mons\n' })
    .on('ceph --connect-timeout 3 mgr stat', { exitCode: 0, stdout: '{"available":true}\n' });
  const { clock, lines, deps } = fakeWorld(testConfig());
  const plan = planDependentServices(testConfig()).filter((s) => s.name.startsWith('ceph'));
  const r = await bringUpDependentServices(plan, { services: createSystemServices(exec, { systemctl: '/shim' }), clock, logger: deps.logger, external: false, timeoutMs: 10_000, signal: new AbortController().signal });
  assert.deepEqual(r.map((x) => [x.name, x.ready]), [['ceph-mon', true], ['ceph-mgr', true]]);
  assert.deepEqual(exec.calls.filter((c) => c.command === '/shim').map((c) => c.args.join(' ')), ['start ceph-mon@pvchv1.service', 'start ceph-mgr@pvchv1.service']);
  assert.deepEqual(lines.filter((l) => /^started /.test(String(l.msg))).map((l) => [l.msg, l.unit]), [['started ceph-mon', 'ceph-mon@pvchv1.service'], ['started ceph-mgr', 'ceph-mgr@pvchv1.service']]);
});

test('options: standalone by default, systemd by flag or NOTIFY_SOCKET; --external-services or PVC_EXTERNAL_SERVICES=1; bad values named', () => {
  assert.deepEqual(resolveRunOptions({}, {}), { mode: 'standalone', externalServices: false, systemctl: 'systemctl', zkTimeoutMs: 60_000, serviceTimeoutMs: 120_000 });
  assert.equal(resolveRunOptions({}, { NOTIFY_SOCKET: '/run/systemd/notify' }).mode, 'systemd');
  assert.equal(resolveRunOptions({}, { INVOCATION_ID: 'abc' }).mode, 'standalone');
  assert.equal(resolveRunOptions({ mode: 'standalone' }, { NOTIFY_SOCKET: '/x' }).mode, 'standalone');
  assert.equal(resolveRunOptions({ 'external-services': true }, {}).externalServices, true);
  assert.equal(resolveRunOptions({}, { PVC_EXTERNAL_SERVICES: '1' }).externalServices, true);
  assert.equal(resolveRunOptions({ 'zk-timeout': '2.5' }, {}).zkTimeoutMs, 2500);
  assert.equal(resolveRunOptions({ systemctl: '/h/bin/systemctl' }, { PVC_SYSTEMCTL: '/other' }).systemctl, '/h/bin/systemctl');
  assert.equal(resolveRunOptions({}, { PVC_SYSTEMCTL: '/other' }).systemctl, '/other');
  assert.equal(resolveRunOptions({}, { PVC_SYSTEMCTL: '' }).systemctl, 'systemctl');
  assert.throws(() => resolveRunOptions({ systemctl: true }, {}), /--systemctl: expected the path of a systemctl-compatible program/);
  assert.throws(() => resolveRunOptions({ mode: 'cluster' }, {}), /--mode: expected standalone or systemd, got "cluster"/);
  assert.throws(() => resolveRunOptions({ 'zk-timeout': 'soon' }, {}), /--zk-timeout: expected a positive number of seconds, got "soon"/);
});
