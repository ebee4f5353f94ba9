// Root: a VM with an RBD disk through a real vmd, on the one-host Ceph (../ceph/ceph-host.ts), the
// tier's private libvirtd + QEMU and the real cephd (its built dist/main.js). Ceph, cephd and
// libvirtd (so every QEMU it starts) run in the Ceph host's network namespace — this node, hv1,
// storage address 10.254.0.1 — and vmd in the root namespace, reaching libvirtd, cephd and ZK over
// unix sockets and loopback. A QEMU in the foreign namespace (10.254.0.2) stands for another node.
//
// The guest (tests/support/guest, `pvc.disk=/dev/vda pvc.marker=write:<m>`) prints what its disk
// held at boot, then writes the marker: started → written and on Ceph (rbd export), QEMU's
// exclusive lock from 10.254.0.1; stopped and started again (with a stale lock of this node added
// meanwhile, which vmd's start flush removes) → it reads the marker back; a foreign QEMU holding the
// image → the start is refused naming the holder and no QEMU is started here; that QEMU killed (a
// fenced node) and its lock freed in FORCE mode as keepaliled's recovery does → the VM starts and
// reads the marker. And vmd's live-migration command moves a running RBD guest between two libvirtds.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CEPHD, rpcClient, type CephdApi, type RpcClient } from '@pvc/rpc';
import { createExec, createLogger, realClock } from '@pvc/runtime';
import { connectZk, domainKeys, newDomainObject, newNodeObject, pair, paths, readKey, type ZkClient } from '@pvc/zk';
import { parseDomainXml } from '../../../apps/cli/src/ops/domain-xml.js';
import { createVirshMigrator } from '../../../apps/vmd/src/host/virsh-migrate.js';
import { consoleDisk, consoleSize, guestLines } from '../../support/guest/index.js';
import { lifecycleEvents, type LifecycleEvents } from '../../support/lifecycle-events.js';
import { rbdWatchers, watcherIp } from '../../support/rbd-watchers.js';
import { waitUntil } from '../../support/wait.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { CephHost, FOREIGN_IP, HOST_IP } from '../ceph/ceph-host.js';
import { QemuRbd } from '../ceph/qemu-rbd.js';
import { startService, type ServiceProcess } from '../services/service-process.js';
import { LibvirtTestDaemon } from './libvirtd.js';
import { startVmdProcess, type VmdProcess } from './vmd-process.js';

interface Lock {
  id: string;
  locker: string;
  address: string;
}

const VM = 'rbdvm1';
const UUID = '0000dd01-1111-2222-3333-444444444444';
const IMAGE = `vms/${VM}_disk0`;
const MARKER = `m-${process.pid}`;
const BOOT_MS = 90_000; // a TCG boot is ~5 s; bounded generously for a loaded 2-core machine

describe('a VM with an RBD disk through vmd, on a real one-host Ceph, libvirtd + QEMU and cephd', () => {
  let ceph: CephHost;
  let cephd: ServiceProcess;
  let lv: LibvirtTestDaemon;
  let zks: ZkTestServer;
  let zk: ZkClient;
  let vmd: VmdProcess;
  let events: LifecycleEvents;
  let cephdClient: RpcClient<CephdApi>;
  let dir: string;
  const extra: { stop(): Promise<void> }[] = [];

  const locks = async (image = IMAGE): Promise<Lock[]> => JSON.parse(await ceph.mustInHost('rbd', ['lock', 'list', '--format', 'json', image])) as Lock[];
  const running = (): string[] => lv.running();
  /** The IPs of the clients that have `image` open (one per QEMU), sorted. */
  const openedFrom = async (image = IMAGE): Promise<string[]> => (await rbdWatchers((a) => ceph.mustInHost('rbd', a), image)).map((w) => watcherIp(w.address)).sort();
  const consoleLog = (): string => lv.consoleLog(VM);
  const setState = (state: string): Promise<void> => zk.write([pair(domainKeys(UUID).state, state)]);
  /** Runs `fn`; a failure carries the tail of vmd's output and the guest's console. */
  const withContext = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      const guest = guestLines(consoleLog(), VM).filter((l) => !l.startsWith('tick')).slice(-10).join('\n');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- guest ---\n${guest}\n--- vmd (tail) ---\n${vmd.output().slice(-4000)}`, { cause: err });
    }
  };
  /** Waits until the guest booted (after `from` bytes of its console) and printed its disk lines. */
  const booted = (from: number, wrote: boolean) => waitUntil(() => consoleDisk(consoleLog(), VM, from), {
    what: `${VM}'s marker lines on its console`, timeoutMs: BOOT_MS, intervalMs: 200,
    until: (d) => d.errors.length > 0 || (d.boots.length > 0 && (!wrote || d.wrote.length > 0)),
  });
  const stopped = () => waitUntil(running, { what: `${VM} destroyed by vmd`, timeoutMs: 60_000, intervalMs: 200, until: (r) => !r.includes(VM) });

  before(async () => {
    ceph = await CephHost.start();
    cephd = await startService('cephd', [['pvc.functions.enable_storage', true], ['pvc.cluster.coordinators', ['localhost']]], ceph.env, ['ip', 'netns', 'exec', ceph.hostNs]);
    cephdClient = rpcClient(cephd.target, CEPHD);
    lv = await LibvirtTestDaemon.start({ netns: ceph.hostNs, cephConf: ceph.conf });
    zks = await ZkTestServer.start();
    zk = await connectZk({ hosts: ['127.0.0.1'], port: zks.port, clock: realClock });
    await ceph.mustInHost('rbd', ['create', '--size', '64M', IMAGE]);
    const xml = lv.guestXml(VM, { uuid: UUID, disks: [{ pool: 'vms', image: `${VM}_disk0` }], cmdline: `pvc.disk=/dev/vda pvc.marker=write:${MARKER}` });
    await seed(zk, xml);
    events = lifecycleEvents(lv.uri);
    dir = mkdtempSync(join(tmpdir(), 'pvc-rbd-vmd-'));
    vmd = startVmdProcess({
      dir, node: 'hv1', hosts: { hv1: '127.0.0.1' }, libvirtUri: lv.uri,
      edits: [
        ['pvc.database.zookeeper.port', zks.port], ['pvc.functions.enable_storage', true], ['pvc.functions.enable_networking', false],
        // cephd's socket is in its dynamic directory: vmd finds it there, as on a node.
        ['pvc.system.configuration.directories.dynamic_directory', join(cephd.dir, 'run')],
      ],
    });
    await waitUntil(() => /connected to libvirt/.test(vmd.output()), { what: 'vmd connected to ZK and libvirt', timeoutMs: 30_000 });
  });
  after(async () => {
    for (const q of extra) await q.stop().catch(() => undefined);
    events?.close();
    if (vmd) {
      vmd.child.kill('SIGTERM');
      await vmd.exited;
    }
    await zk?.close();
    await zks?.destroy();
    await lv?.destroy();
    cephdClient?.close();
    await cephd?.cleanup();
    await ceph?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the rbdlist of the stored VM is the XML\'s RBD volume (as `pvc vm define` keeps it)', async () => {
    assert.deepEqual(await readKey(zk, domainKeys(UUID).rbdList), [IMAGE]);
  });

  test('started by vmd (locks flushed first), the guest writes its marker; it is on Ceph; QEMU holds the exclusive lock from this node\'s address', () => withContext(async () => {
    await setState('start');
    const disk = await booted(0, true);
    assert.deepEqual(disk, { boots: [null], wrote: [MARKER], writes: [], errors: [] });
    await waitUntil(() => vmd.output(), { what: 'vmd\'s "RBD locks flushed before start"', until: (o) => o.includes('RBD locks flushed before start') });
    const flushed = vmd.output().split('\n').find((l) => l.includes('RBD locks flushed before start'));
    assert.ok(flushed?.includes(IMAGE), flushed);
    const [lock, ...more] = await waitUntil(() => locks(), { what: `QEMU's exclusive lock on ${IMAGE}`, until: (l) => l.length > 0 });
    assert.deepEqual(more, []);
    assert.match(lock?.id ?? '', /^auto \d+$/, 'librbd\'s managed exclusive lock');
    assert.ok(lock?.address.startsWith(`${HOST_IP}:`), `lock address ${lock?.address}: QEMU runs in this node's namespace`);
    assert.deepEqual(await openedFrom(), [HOST_IP], 'one client has the image open: this node\'s QEMU');
    const file = join(dir, 'export.raw');
    await ceph.mustInHost('rbd', ['export', '--no-progress', IMAGE, file]);
    const head = readFileSync(file).subarray(0, 512);
    rmSync(file);
    assert.equal(head.subarray(0, MARKER.length + 6).toString(), `PVCM:${MARKER}\n`, 'the marker the guest synced is on the image');
    assert.ok(head.subarray(MARKER.length + 6).every((b) => b === 0), 'zero-padded to 512 bytes');
    // vmd's stats name the disk by its RBD source, as the original's keepalive does.
    const stats = await waitUntil(async () => (await readKey(zk, domainKeys(UUID).stats)) as { disk_stats?: { name: string; wr_req: number }[] } | null, {
      what: `${VM}'s stats with a written disk`, timeoutMs: 20_000, until: (st) => (st?.disk_stats?.[0]?.wr_req ?? 0) > 0,
    });
    assert.deepEqual(stats?.disk_stats?.map((d) => d.name), [IMAGE]);
  }));

  test('stopped (its lock released) and started again over a stale lock of this node, it reads the marker back', () => withContext(async () => {
    await setState('stop');
    await stopped();
    const left = await waitUntil(() => locks(), { what: `QEMU's lock on ${IMAGE} released after its stop`, timeoutMs: 20_000, until: (l) => l.length === 0 });
    assert.deepEqual(left, []);
    // What a node that crashed with the VM leaves behind: a lock from its own storage address.
    await ceph.mustInHost('rbd', ['lock', 'add', IMAGE, 'stale-own']);
    assert.equal((await locks()).length, 1);
    const from = consoleSize(consoleLog());
    await setState('start');
    const disk = await booted(from, true);
    assert.deepEqual(disk.boots, [MARKER], 'the second boot found the first boot\'s marker on the disk');
    assert.deepEqual(disk.errors, []);
    const now = await waitUntil(() => locks(), { what: 'only QEMU\'s lock', until: (l) => l.length === 1 && l[0]!.id.startsWith('auto ') });
    assert.ok(now[0]?.address.startsWith(`${HOST_IP}:`));
    assert.match(cephd.output(), /"lockId":"stale-own"[^\n]*"msg":"removed RBD lock"|"msg":"removed RBD lock"[^\n]*"lockId":"stale-own"/, 'cephd removed the stale lock of this node');
  }));

  test('a QEMU on another node\'s address holding the image: the start is refused naming the holder, nothing starts here', () => withContext(async () => {
    await setState('shutdown'); // the guest ignores ACPI: vmd destroys it after vm_shutdown_timeout (3 s)
    await stopped();
    await waitUntil(() => locks(), { what: 'no lock left after the stop', timeoutMs: 20_000, until: (l) => l.length === 0 });
    const foreign = await QemuRbd.start(ceph, ceph.foreignNs, IMAGE);
    extra.push(foreign);
    assert.match(await foreign.write(0x44, 8192), /wrote 4096\/4096 bytes at offset 8192/);
    const [held] = await waitUntil(() => locks(), { what: 'the foreign QEMU\'s exclusive lock', until: (l) => l.length === 1 });
    assert.ok(held?.address.startsWith(`${FOREIGN_IP}:`), held?.address);
    events.clear();
    const from = consoleSize(consoleLog());
    await setState('start');
    const state = await waitUntil(() => readKey(zk, domainKeys(UUID).state), { what: `${VM} state fail`, timeoutMs: 30_000, until: (s) => s === 'fail' });
    assert.equal(state, 'fail');
    const reason = await readKey(zk, domainKeys(UUID).failedReason);
    assert.ok(reason.startsWith('Could not safely free RBD locks: '), reason);
    assert.ok(reason.includes(`${IMAGE} held by ${held?.locker} at ${held?.address} (lock "${held?.id}")`), reason);
    await realClock.sleep(3_000); // a later pass must not start it either
    assert.equal(events.started.has(VM), false, 'libvirt never started the guest');
    assert.ok(!running().includes(VM));
    assert.equal(consoleSize(consoleLog()), from, 'the guest printed nothing: it never booted');
    assert.deepEqual(await locks(), [held], 'the foreign lock is left in place');
    assert.deepEqual(await openedFrom(), [FOREIGN_IP], 'only the foreign QEMU has the image open: never two');
    assert.match(await foreign.write(0x45, 8192), /wrote 4096\/4096 bytes at offset 8192/, 'the foreign writer is not broken');
  }));

  test('the holder gone (its node fenced) and its lock freed in FORCE mode as keepaliled\'s recovery does, the VM starts and reads the marker', (t) => withContext(async () => {
    const [held] = await locks();
    assert.ok(held, 'the foreign QEMU\'s lock is still there');
    await extra.pop()?.stop(); // SIGKILL: the lock stays, as a powered-off node's would
    assert.deepEqual(await locks(), [held]);
    const watchedBefore = await openedFrom();
    const t0 = realClock.now();
    const r = await cephdClient.flushLocks({ images: [IMAGE], mode: 'FLUSH_MODE_FORCE', deadNode: '' }, { deadlineMs: 60_000 });
    const flushMs = realClock.now() - t0;
    assert.deepEqual(r, { flushed: [IMAGE], failed: [], held: [] });
    // The killed QEMU's watch: gone once Ceph blocklisted its client (rbd lock remove does).
    const watchers = await waitUntil(() => openedFrom(), { what: 'the killed QEMU\'s watch gone', timeoutMs: 40_000, intervalMs: 200, until: (w) => w.length === 0 });
    const unwatchedMs = realClock.now() - t0;
    assert.deepEqual(watchers, []);
    const from = consoleSize(consoleLog());
    const t1 = realClock.now();
    await zk.write([pair(domainKeys(UUID).state, 'start'), pair(domainKeys(UUID).failedReason, '')]);
    const disk = await booted(from, true);
    t.diagnostic(`FORCE flush of one image with a dead QEMU's lock: ${flushMs} ms (its watch, from ${JSON.stringify(watchedBefore)} before, gone ${unwatchedMs} ms after the flush began); state=start → guest printed its marker lines: ${realClock.now() - t1} ms`);
    assert.deepEqual(await openedFrom(), [HOST_IP], 'only this node\'s new QEMU has the image open');
    assert.deepEqual(disk.boots, [MARKER]);
    const [lock] = await waitUntil(() => locks(), { what: 'QEMU\'s lock again', until: (l) => l.length === 1 && l[0]!.address.startsWith(`${HOST_IP}:`) });
    assert.match(lock?.id ?? '', /^auto \d+$/);
    await setState('stop');
    await stopped();
  }));

  test('vmd\'s live-migration command moves a running RBD guest between two libvirtds; it keeps writing and the lock follows', async (t) => {
    // Two more daemons in the same namespace (not vmd's: vmd would start a VM of its own that left).
    const [src, dst] = [await LibvirtTestDaemon.start({ netns: ceph.hostNs, cephConf: ceph.conf }), await LibvirtTestDaemon.start({ netns: ceph.hostNs, cephConf: ceph.conf })];
    extra.push({ stop: () => src.destroy() }, { stop: () => dst.destroy() });
    const name = 'rbdmig1';
    const uuid = '0000dd02-1111-2222-3333-444444444444';
    await ceph.mustInHost('rbd', ['create', '--size', '64M', `vms/${name}_disk0`]);
    const xml = src.guestXml(name, { uuid, disks: [{ pool: 'vms', image: `${name}_disk0` }], cmdline: 'pvc.disk=/dev/vda pvc.marker=write:mig pvc.diskwrite=1' });
    const conn = createExec(createLogger({ service: 'test', node: 'test', destination: { write: () => undefined } }));
    const xmlFile = join(dir, `${name}.xml`);
    writeFileSync(xmlFile, xml);
    const created = await conn.run('virsh', ['-c', src.uri, 'create', xmlFile], { timeoutMs: 60_000 });
    assert.equal(created.exitCode, 0, created.stderr);
    const log = src.consoleLog(name);
    await waitUntil(() => consoleDisk(log, name).writes.length, { what: `${name} writing its disk`, timeoutMs: BOOT_MS, intervalMs: 200, until: (n) => n >= 2 });
    const [before] = await locks(`vms/${name}_disk0`);
    const t0 = realClock.now();
    await createVirshMigrator(conn, src.uri).migrateLive(uuid, { libvirtUri: dst.uri, migrateUri: `tcp://${HOST_IP}` }, 60_000);
    const ms = realClock.now() - t0;
    t.diagnostic(`virsh migrate --live of a 96 MiB TCG guest with an RBD disk (cache=none), same host: ${ms} ms`);
    assert.deepEqual([src.running(), dst.running()], [[], [name]]);
    const from = consoleSize(log); // the XML, and so the console log path, moved with the guest
    const after = await waitUntil(() => consoleDisk(log, name, from).writes, { what: `${name} writing after the migration`, timeoutMs: 30_000, intervalMs: 200, until: (w) => w.length >= 2 });
    assert.ok(after.every((w) => w.ok), JSON.stringify(after));
    const [moved] = await waitUntil(() => locks(`vms/${name}_disk0`), { what: 'the new QEMU\'s lock', until: (l) => l.length === 1 && l[0]!.address !== before?.address });
    assert.notEqual(moved?.address, before?.address, 'the destination QEMU holds the lock now');
  });

  test('without /etc/ceph/ceph.conf, a disk naming its conf (<config file>) or its monitors (<host>) works too', async () => {
    const bare = await LibvirtTestDaemon.start({ netns: ceph.hostNs }); // no cephConf: nothing at /etc/ceph/ceph.conf
    extra.push({ stop: () => bare.destroy() });
    const exec = createExec(createLogger({ service: 'test', node: 'test', destination: { write: () => undefined } }));
    const forms = [
      { name: 'rbdconf1', disk: { pool: 'vms', image: 'rbdconf1_disk0', config: ceph.conf } },
      { name: 'rbdhost1', disk: { pool: 'vms', image: 'rbdhost1_disk0', hosts: [{ name: HOST_IP, port: 6789 }] } },
    ];
    for (const [i, f] of forms.entries()) {
      await ceph.mustInHost('rbd', ['create', '--size', '64M', `vms/${f.name}_disk0`]);
      const file = join(dir, `${f.name}.xml`);
      writeFileSync(file, bare.guestXml(f.name, { uuid: `0000dd1${i}-1111-2222-3333-444444444444`, disks: [f.disk], cmdline: `pvc.disk=/dev/vda pvc.marker=write:${f.name}` }));
      const r = await exec.run('virsh', ['-c', bare.uri, 'create', file], { timeoutMs: 60_000 });
      assert.equal(r.exitCode, 0, r.stderr);
    }
    for (const f of forms) {
      const disk = await waitUntil(() => consoleDisk(bare.consoleLog(f.name), f.name), {
        what: `${f.name}'s marker written`, timeoutMs: BOOT_MS, intervalMs: 200, until: (d) => d.errors.length > 0 || d.wrote.length > 0,
      });
      assert.deepEqual(disk, { boots: [null], wrote: [f.name], writes: [], errors: [] }, f.name);
      assert.deepEqual(await openedFrom(`vms/${f.name}_disk0`), [HOST_IP], f.name);
    }
  });
});

/** hv1 running and ready; the VM stopped on hv1, its rbdlist taken from the XML as the CLI does. */
async function seed(zk: ZkClient, xml: string): Promise<void> {
  for (const p of [paths.nodes, paths.domains]) await zk.ensurePath(p);
  const n = newNodeObject({ name: 'hv1', daemonMode: 'hypervisor', nowMs: realClock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
  await zk.createObject(n.root, n.entries);
  await zk.write([[paths.node('hv1').domainState, 'ready'], [paths.node('hv1').daemonState, 'run']]);
  const d = newDomainObject({ uuid: UUID, name: VM, node: 'hv1', state: 'stop', xml, rbdList: parseDomainXml(xml, VM).rbdVolumes });
  await zk.createObject(d.root, d.entries);
}
