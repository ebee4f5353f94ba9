/**
 * The original's `test-cluster.sh`, on our real cluster, through the built `pvc` binary only (issue
 * 5 item 9): 3 harness hosts running the node services; every step is a `pvc` command and each is
 * checked against what really happened (virsh on the hosts, the guest's console). Cluster status,
 * maintenance, backup; primary/secondary handovers; a guest's whole life — define, start,
 * shutdown, restart, migrate/unmigrate/move, meta, tags, vcpu/memory with --restart, a node flush
 * and ready, node and console logs, stop, undefine. Throughout, no guest runs on two hosts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingPrerequisites, lastTick, waitFor } from './harness/index.js';
import { startFailoverCluster, type FailoverCluster } from './failover-scenario.js';
import { runningOn } from './migration-scenario.js';

const SETTINGS = { keepaliveInterval: 2, fenceIntervals: 6, successfulFence: 'none' as const, vmShutdownTimeout: 3 };
const log = (l: string): void => console.log(`  [pvc] ${l}`);
const VM = 'cvm1';
const UUID = 'c0000000-0000-4000-8000-000000000001';

interface VmJson { name: string; state: string; node: string; lastNode: string; tags: { name: string }[]; nodeLimit: string[]; nodeSelector: string; autostart: boolean; vcpus: number; memoryMiB: number }
interface NodeJson { name: string; routerState: string; domainState: string; daemonState: string }

describe('pvc drives the real cluster (test-cluster.sh) [root only]', () => {
  let fc: FailoverCluster | undefined;
  let dir: string;
  const pvc = (...args: string[]): Promise<string> => fc!.cli.ok(...args);
  const vmInfo = async (): Promise<VmJson> => JSON.parse(await pvc('vm', 'info', VM, '-f', 'json')) as VmJson;
  const nodes = async (): Promise<NodeJson[]> => JSON.parse(await pvc('node', 'list', '-f', 'json')) as NodeJson[];
  /** The hosts whose libvirtd runs the guest (state running). */
  const where = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const h of fc!.cluster.hosts) if ((await runningOn(h)).includes(UUID)) out.push(h.name);
    return out;
  };
  const ticking = async (): Promise<number> => {
    const file = fc!.cluster.guest.consoleLog(VM);
    return waitFor(`${VM} ticking`, 120_000, async () => lastTick(file, VM), 250);
  };

  before(async () => {
    const missing = missingPrerequisites();
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    dir = mkdtempSync(join(tmpdir(), 'pvc-clitest-'));
    fc = await startFailoverCluster('vcli', SETTINGS, log);
  });

  after(async () => {
    await fc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('cluster status, maintenance on/off, backup', async () => {
    const s = JSON.parse(await pvc('cluster', 'status', '-f', 'json')) as { nodes: { total: number; daemonStates: Record<string, number> }; primaryNode: string; name: string };
    assert.deepEqual([s.name, s.nodes.total, s.nodes.daemonStates], ['vcli', 3, { run: 3 }]);
    assert.equal(s.primaryNode, fc!.primary);
    await pvc('cluster', 'maintenance', 'on');
    assert.equal(JSON.parse(await pvc('cluster', 'status', '-f', 'json')).maintenance, true);
    await pvc('cluster', 'maintenance', 'off');
    const file = join(dir, 'backup.json');
    await pvc('cluster', 'backup', '--file', file);
    const backup = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    assert.equal(backup['/nodes/hv1/daemonstate'], 'run');
    assert.equal(backup['/schema/version'], '15');
  });

  it('node primary / secondary / primary --wait: keepaliled hands the role over each time', async () => {
    const other = fc!.primary === 'hv1' ? 'hv2' : 'hv1';
    for (const [cmd, node] of [['primary', other], ['secondary', other], ['primary', other]] as const) {
      const t0 = Date.now();
      await pvc('node', cmd, node, '--wait', '--wait-timeout', '120');
      const ns = await nodes();
      const primaries = ns.filter((n) => n.routerState === 'primary').map((n) => n.name);
      log(`node ${cmd} ${node} --wait: ${Date.now() - t0} ms; primary now ${primaries.join(',') || 'none'}`);
      if (cmd === 'primary') assert.deepEqual(primaries, [node]);
      else assert.equal(ns.find((n) => n.name === node)?.routerState, 'secondary');
      assert.ok(primaries.length <= 1, 'never two primaries');
    }
  });

  it('vm define --target hv2 --tag, start --wait: runs on hv2 and ticks', async () => {
    const out = await fc!.cli.define(fc!.cluster.guest.domainXml(VM, { uuid: UUID, memoryMiB: 96 }), 'hv2', '--tag', 'pvc-test', '--migration-method', 'live');
    assert.match(out, new RegExp(UUID));
    assert.equal((await vmInfo()).state, 'stop');
    const t0 = Date.now();
    await pvc('vm', 'start', VM, '--wait', '--wait-timeout', '120');
    log(`vm start --wait: ${Date.now() - t0} ms (CLI start to listed running)`);
    assert.deepEqual(await where(), ['hv2']);
    await ticking();
    assert.equal((await pvc('vm', 'dump', VM)).trim().startsWith('<domain'), true);
  });

  it('vm shutdown --wait, start, restart --wait', async () => {
    let t0 = Date.now();
    await pvc('vm', 'shutdown', VM, '--wait', '--wait-timeout', '120');
    log(`vm shutdown --wait: ${Date.now() - t0} ms (vm_shutdown_timeout 3 s)`);
    assert.deepEqual([(await vmInfo()).state, await where()], ['stop', []]);
    await pvc('vm', 'start', VM, '--wait', '--wait-timeout', '120');
    assert.deepEqual(await where(), ['hv2']);
    t0 = Date.now();
    await pvc('vm', 'restart', VM, '--wait', '--wait-timeout', '120');
    log(`vm restart --wait: ${Date.now() - t0} ms`);
    assert.deepEqual([(await vmInfo()).state, await where()], ['start', ['hv2']]);
    const refused = await fc!.cli.run(['vm', 'restart', 'no-such-vm']);
    assert.equal(refused.code, 1);
  });

  it('vm migrate --wait, unmigrate --wait, move --wait: the guest follows, same boot', async () => {
    await ticking();
    const steps: [string[], string, string][] = [
      [['vm', 'migrate', VM, '--target', 'hv3'], 'hv3', 'hv2'],
      [['vm', 'unmigrate', VM], 'hv2', ''],
      [['vm', 'move', VM, '--target', 'hv1'], 'hv1', ''],
    ];
    for (const [args, node, lastNode] of steps) {
      const before = lastTick(fc!.cluster.guest.consoleLog(VM), VM) ?? -1;
      const t0 = Date.now();
      await pvc(...args, '--wait', '--wait-timeout', '180');
      const info = await vmInfo();
      log(`${args.slice(1, 2).join(' ')} → ${node}: ${Date.now() - t0} ms (CLI start to done)`);
      assert.deepEqual([info.state, info.node, info.lastNode, await where()], ['start', node, lastNode, [node]]);
      const after = await waitFor('ticks carry on', 30_000, async () => {
        const t = lastTick(fc!.cluster.guest.consoleLog(VM), VM) ?? -1;
        return t > before ? t : undefined;
      }, 250);
      assert.ok(after > before, 'the tick counter carried on (no reboot)');
    }
  });

  it('vm meta, tags, vcpu set, memory set --restart --wait', async () => {
    await pvc('vm', 'meta', VM, '--node-limit', 'hv1,hv2', '--node-selector', 'vms', '--no-autostart');
    await pvc('vm', 'tag', 'add', VM, 'second');
    let info = await vmInfo();
    assert.deepEqual([info.nodeLimit, info.nodeSelector, info.autostart, info.tags.map((t) => t.name).sort()], [['hv1', 'hv2'], 'vms', false, ['pvc-test', 'second']]);
    const tagged = JSON.parse(await pvc('vm', 'list', '--tag', 'second', '-f', 'json')) as VmJson[];
    assert.deepEqual(tagged.map((v) => v.name), [VM]);
    await pvc('vm', 'tag', 'remove', VM, 'second');
    await pvc('vm', 'vcpu', 'set', VM, '1');
    await pvc('vm', 'memory', 'set', VM, '112', '--restart', '--wait', '--wait-timeout', '120');
    info = await vmInfo();
    assert.deepEqual([info.vcpus, info.memoryMiB, info.state, await where()], [1, 112, 'start', ['hv1']]);
    const live = await fc!.cluster.host('hv1').virsh(['dumpxml', UUID]);
    assert.match(live.stdout, /<memory unit='KiB'>114688<\/memory>/, 'libvirt runs it with the new memory');
  });

  it('node flush hv1 --wait moves it inside its node limit (hv2); node ready hv1 --wait brings it back', async () => {
    await pvc('node', 'flush', 'hv1', '--wait', '--wait-timeout', '180');
    assert.deepEqual([(await vmInfo()).node, await where()], ['hv2', ['hv2']]);
    assert.equal((await nodes()).find((n) => n.name === 'hv1')?.domainState, 'flushed');
    await pvc('node', 'ready', 'hv1', '--wait', '--wait-timeout', '180');
    assert.deepEqual([(await vmInfo()).node, await where()], ['hv1', ['hv1']]);
  });

  it('node log (the services write it into Zookeeper) and vm log (the console)', async () => {
    const nodeLog = await pvc('node', 'log', 'hv1', '--lines', '200');
    assert.match(nodeLog, /^(pvc-)?(vmd|keepaliled|supervisor|netd|cephd): /m);
    assert.ok(nodeLog.trimEnd().split('\n').length <= 200);
    const consoleLog = await waitFor('console log in ZK', 30_000, async () => {
      const text = await pvc('vm', 'log', VM, '--lines', '5');
      return text.includes(`pvc-guest ${VM} tick`) ? text : undefined;
    }, 500);
    assert.ok(consoleLog.trimEnd().split('\n').length <= 5);
  });

  it('vm stop --wait, undefine --yes: gone from ZK and from every host', async () => {
    await pvc('vm', 'stop', VM, '--wait', '--wait-timeout', '120');
    assert.deepEqual(await where(), []);
    await pvc('vm', 'undefine', VM, '--yes');
    assert.deepEqual(JSON.parse(await pvc('vm', 'list', '-f', 'json')), []);
    const gone = await fc!.cli.run(['vm', 'info', VM]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /no VM named or with UUID "cvm1"/);
  });

  it('no VM ever ran on two hosts (every libvirtd polled every 200 ms)', async () => {
    await fc!.watch.stop();
    log(`DoubleRunWatch: ${fc!.watch.polls} polls, ${fc!.watch.violations.length} confirmed, ${fc!.watch.unconfirmed.length} unconfirmed`);
    assert.ok(fc!.watch.polls > 20);
    assert.deepEqual(fc!.watch.violations, []);
  });
});
