import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paths, type ZkClient } from '@pvc/zk';
import { testXml, unitRig } from './testing.js';
import { createVmdService } from './rpc/vmd-service.js';

const U1 = '11111111-0000-0000-0000-000000000001';
const U2 = '22222222-0000-0000-0000-000000000002';

describe('Reconciler with a fake libvirt and a fake ZK (virtual time)', () => {
  it('starts a VM assigned here in start once; further passes and a restarted vmd start nothing again', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start');
    const r1 = await rig.startVmd();
    await rig.settle();
    assert.equal(rig.hv.isRunning(U1), true);
    await rig.settle(20_000);
    const r2 = await rig.startVmd(); // a second vmd process after a restart, same libvirt
    await rig.settle(20_000);
    assert.equal(rig.hv.creates.get(U1), 1);
    assert.ok(r1.passes > 5 && r2.passes > 5);
    await rig.stop();
  });

  it('stop destroys and writes stop; disable and fail of a stopped VM do nothing', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start');
    await rig.define(U2, 'vm2', 'disable');
    await rig.startVmd();
    await rig.settle();
    await rig.admin.write([[paths.domain(U1).state, 'stop']]);
    await rig.settle();
    assert.equal(rig.hv.isRunning(U1), false);
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'stop');
    assert.deepEqual(rig.hv.destroys, [U1]);
    assert.equal(rig.hv.creates.get(U2), undefined);
    await rig.stop();
  });

  it('shutdown: a guest ignoring ACPI is destroyed after vm_shutdown_timeout, then stop', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start');
    await rig.startVmd();
    await rig.settle();
    await rig.admin.write([[paths.domain(U1).state, 'shutdown']]);
    await rig.settle(5000);
    assert.deepEqual(rig.hv.shutdowns, [U1]);
    assert.equal(rig.hv.isRunning(U1), true, 'still within the 10 s timeout');
    await rig.settle(8000);
    assert.equal(rig.hv.isRunning(U1), false);
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'stop');
    assert.deepEqual(rig.hv.shutdowns, [U1], 'ACPI asked once');
    await rig.stop();
  });

  it('shutdown of a cooperative guest writes stop once it is off; restart comes back in start', async () => {
    const rig = await unitRig({ acpiShutdownMs: 1500 });
    await rig.define(U1, 'vm1', 'start');
    await rig.startVmd();
    await rig.settle();
    await rig.admin.write([[paths.domain(U1).state, 'restart']]);
    await rig.settle(8000);
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'start');
    assert.equal(rig.hv.isRunning(U1), true);
    assert.equal(rig.hv.creates.get(U1), 2);
    assert.deepEqual(rig.hv.destroys, [], 'no hard stop needed');
    await rig.admin.write([[paths.domain(U1).state, 'shutdown']]);
    await rig.settle(6000);
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'stop');
    assert.equal(rig.hv.isRunning(U1), false);
    await rig.stop();
  });

  it('a start libvirt refuses → fail with libvirt\'s message; a bad XML → fail; the other VM runs', async () => {
    const rig = await unitRig();
    rig.hv.failStart = 1;
    await rig.define(U1, 'vm1', 'start');
    await rig.startVmd();
    await rig.settle();
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'fail');
    assert.equal(await rig.admin.read(paths.domain(U1).failedReason), rig.hv.failStartMessage);
    await rig.define(U2, 'vm2', 'start', 'hv1', 'not xml at all');
    await rig.admin.write([[paths.domain(U1).state, 'start']]);
    await rig.settle();
    assert.equal(await rig.admin.read(paths.domain(U2).state), 'fail');
    assert.match((await rig.admin.read(paths.domain(U2).failedReason)) ?? '', /no <domain> element/);
    assert.equal(rig.hv.isRunning(U1), true);
    assert.equal(await rig.admin.read(paths.domain(U1).failedReason), '', 'cleared after a good start');
    await rig.stop();
  });

  it('bad input is logged with the VM name and key, never acted on, never a crash', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'frobnicate');
    await rig.define(U2, 'vm2', 'start', 'nosuchnode');
    rig.hv.addRunning(U2, 'vm2');
    const r = await rig.startVmd();
    await rig.settle(10_000);
    assert.equal(rig.hv.creates.get(U1), undefined);
    assert.equal(rig.hv.isRunning(U2), true, 'a VM whose node key names no node is left alone');
    const warn = (re: RegExp) => rig.lines.filter((l) => re.test(String(l.msg)));
    assert.equal(warn(/unknown value "frobnicate"/).length, 1, 'logged once, not every pass');
    assert.equal(warn(/unknown value/)[0]?.vm, 'vm1');
    assert.equal(warn(/unknown value/)[0]?.key, paths.domain(U1).state);
    assert.equal(warn(/names no node: "nosuchnode"/)[0]?.key, paths.domain(U2).node);
    assert.ok(r.passes > 3);
    await rig.stop();
  });

  it('a domain here that ZK assigns elsewhere is destroyed without a state write', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start', 'hv2');
    rig.hv.addRunning(U1, 'vm1');
    await rig.startVmd();
    await rig.settle();
    assert.equal(rig.hv.isRunning(U1), false);
    assert.equal(await rig.admin.read(paths.domain(U1).state), 'start');
    await rig.stop();
  });

  it('fencing contract: no start while domainstate is fence-flush (even with daemonstate run); starts once ready', async () => {
    const rig = await unitRig();
    await rig.admin.write([[paths.node('hv1').domainState, 'fence-flush'], [paths.node('hv1').daemonState, 'run']]);
    await rig.define(U1, 'vm1', 'start');
    await rig.startVmd();
    await rig.settle(10_000);
    assert.equal(rig.hv.creates.get(U1), undefined);
    assert.ok(rig.lines.some((l) => /fence-flushed/.test(String(l.msg))));
    await rig.admin.write([[paths.node('hv1').domainState, 'ready']]);
    await rig.settle();
    assert.equal(rig.hv.isRunning(U1), true);
    await rig.stop();
  });

  it('ZK session lost: a domain assigned elsewhere is left running until the session is back', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start', 'hv2');
    const r = await rig.startVmd();
    await rig.settle();
    const zk = (r as unknown as { deps: { zk: ZkClient } }).deps.zk;
    rig.server.disconnect(zk);
    rig.hv.addRunning(U1, 'vm1');
    await rig.settle(4000);
    assert.equal(rig.hv.isRunning(U1), true, 'nothing destructive while disconnected');
    rig.server.reconnect(zk);
    await rig.settle(4000);
    assert.equal(rig.hv.isRunning(U1), false);
    await rig.stop();
  });

  it('libvirt unreachable: the pass is skipped (nothing started twice), retried after 0.5, 1, 2, 2 s, logged once, then converges', async () => {
    const rig = await unitRig();
    rig.hv.down = true;
    await rig.define(U1, 'vm1', 'start');
    const r = await rig.startVmd();
    const at: number[] = [];
    r.onPass = () => at.push(rig.clock.now());
    const t0 = rig.clock.now();
    await rig.settle(1);
    // ZK watches and libvirt events during the backoff join the retry instead of hurrying it.
    await rig.admin.write([[paths.domain(U1).state, 'start']]);
    await rig.settle(7000);
    assert.equal(rig.hv.creates.get(U1), undefined);
    assert.deepEqual(at.map((t) => t - t0), [0, 500, 1500, 3500, 5500], 'a quarter of resyncMs, doubling, at most resyncMs');
    const down = rig.lines.filter((l) => /^cannot list libvirt/.test(String(l.err)) && l.level === 40);
    assert.equal(down.length, 1, 'logged once, not at every pass');
    assert.match(String(down[0]?.msg), /^reconcile: failed; retrying with growing delays/);
    rig.hv.down = false;
    await rig.settle();
    assert.equal(rig.hv.creates.get(U1), 1);
    assert.equal(rig.lines.filter((l) => l.msg === 'reconcile: works again').length, 1);
    await rig.stop();
  });

  it('runningdomains/domainscount follow libvirt at once (not only at the next keepalive)', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start');
    await rig.define(U2, 'vm2', 'start');
    await rig.startVmd();
    await rig.settle();
    const k = paths.node('hv1');
    const running = async (): Promise<[string | undefined, string | undefined]> => [await rig.admin.read(k.runningDomains), await rig.admin.read(k.domainsCount)];
    assert.deepEqual(await running(), [[U1, U2].sort().join(' '), '2']);
    const version = (await rig.admin.get(k.runningDomains)).stat.version;
    await rig.settle(10_000);
    assert.equal((await rig.admin.get(k.runningDomains)).stat.version, version, 'unchanged list: no rewrite every pass');
    await rig.admin.write([[paths.domain(U1).state, 'stop']]);
    await rig.settle();
    assert.deepEqual(await running(), [U2, '1']);
    await rig.stop();
  });

  it('figures, stats keys and stopAll', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start', 'hv1', testXml('vm1', U1, 256));
    await rig.define(U2, 'vm2', 'stop', 'hv1', testXml('vm2', U2, 512));
    rig.hv.addRunning('99999999-0000-0000-0000-000000000009', 'foreign', 64, 1);
    const r = await rig.startVmd();
    await rig.settle(6000);
    assert.deepEqual(r.resources(), {
      runningDomains: [U1, '99999999-0000-0000-0000-000000000009'], memAllocMib: 256 + 64, memProvMib: 256 + 64 + 512, vcpuAlloc: 3,
    });
    const stats = JSON.parse((await rig.admin.read(paths.domain(U1).stats)) ?? '{}') as Record<string, unknown>;
    assert.equal(stats.state, 'RUNNING', 'the original\'s libvirt_vm_states spelling');
    assert.equal(stats.maxmem, 256 * 1024);
    assert.equal(stats.cpus, 2);
    assert.deepEqual(Object.keys(stats), ['state', 'maxmem', 'livemem', 'cpus', 'cputime', 'mem_stats', 'cpu_stats', 'disk_stats', 'net_stats']);
    assert.deepEqual(stats.mem_stats, { actual: 256 * 1024, rss: 256 * 1024 });
    assert.equal(await rig.admin.read(paths.domain('99999999-0000-0000-0000-000000000009').stats), undefined, 'a domain PVC does not know gets no key');
    const api = createVmdService({ hv: rig.hv, logger: rig.logger, resources: () => r.resources(), halt: (x) => r.halt(x) });
    rig.hv.failDestroy = 1;
    const res = await api.stopAll({ reason: 'test reset' });
    assert.equal(res.stopped.length + res.failed.length, 2);
    assert.equal(res.failed.length, 1);
    await rig.settle(6000);
    assert.equal(rig.hv.isRunning(U1), false, 'not started again after stopAll');
    assert.equal(rig.hv.creates.get(U1), 1);
    await rig.stop();
  });

  it('stats: a paused VM\'s record is left as it was; a failing libvirt read is logged once and skipped', async () => {
    const rig = await unitRig();
    await rig.define(U1, 'vm1', 'start');
    await rig.define(U2, 'vm2', 'start');
    await rig.startVmd();
    await rig.settle(6000);
    const read = async (u: string) => rig.admin.get(paths.domain(u).stats);
    const before = await read(U2);
    rig.hv.setState(U2, 'paused');
    rig.hv.setStats(U1, { disks: [{ source: 'vms/vm1_disk0', readRequests: 1, readBytes: 512, writeRequests: 2, writeBytes: 1024, errors: -1 }] });
    await rig.settle(5000);
    assert.equal((await read(U2)).stat.version, before.stat.version, 'paused: not rewritten (the original writes RUNNING domains only)');
    const s1 = JSON.parse((await read(U1)).data) as { disk_stats: unknown[] };
    assert.deepEqual(s1.disk_stats, [{ name: 'vms/vm1_disk0', rd_req: 1, rd_bytes: 512, wr_req: 2, wr_bytes: 1024, err: -1 }]);
    rig.hv.failStats = 3;
    const v1 = (await read(U1)).stat.version;
    await rig.settle(21_000);
    assert.equal(rig.lines.filter((l) => /cannot read VM statistics/.test(String(l.msg))).length, 1);
    assert.ok((await read(U1)).stat.version > v1, 'written again once libvirt answers');
    assert.ok(rig.lines.some((l) => /VM statistics readable again/.test(String(l.msg))));
    await rig.stop();
  });
});
