/**
 * vmd's console watcher and vnc key against a real libvirtd (one harness host, TCG guests) and
 * real Zookeeper: the guest prints "pvc-guest <name> tick N" on its serial console every second,
 * libvirt appends it to the file named by the XML's <log file>, vmd keeps the last
 * console_log_lines lines in `consolelog`; `vnc` comes from the live XML.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import { connectZk, newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { createCluster, missingPrerequisites, waitFor } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import { startVmdProcess, type VmdProcess } from '../integration/vmd/vmd-process.js';

const NAME = 'vmdc';
const LINES = 5;
const uuid = (n: number): string => `0000000${n}-1111-2222-3333-55555555555${n}`;
const VNC = "    <graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'/>\n  </devices>";

describe('vmd console log + vnc with real libvirtd + ZK [root only]', () => {
  let cluster: Cluster;
  let hv1: ClusterHost;
  let zk: ZkClient;
  let dir: string;
  let vmd: VmdProcess | undefined;

  const domstate = async (u: string): Promise<string> => {
    const r = await hv1.virsh(['domstate', u]);
    return r.exitCode === 0 ? r.stdout.trim() : 'absent';
  };
  const define = async (n: number, withVnc: boolean): Promise<string> => {
    const u = uuid(n);
    let xml = cluster.guest.domainXml(`con${n}`, { uuid: u, memoryMiB: 96 });
    if (withVnc) xml = xml.replace('  </devices>', VNC);
    const d = newDomainObject({ uuid: u, name: `con${n}`, node: 'hv1', state: 'start', xml });
    await zk.createObject(d.root, d.entries);
    return u;
  };

  before(async () => {
    assert.deepEqual(missingPrerequisites(), []);
    cluster = await createCluster({ name: NAME, hosts: 1, coordinators: 1 });
    hv1 = cluster.hosts[0]!;
    dir = mkdtempSync(join(tmpdir(), 'pvc-vmdc-'));
    zk = await connectZk({ hosts: cluster.zk.connectString.split(','), clock: realClock });
    for (const p of [paths.nodes, paths.domains]) await zk.ensurePath(p);
    const n = newNodeObject({ name: 'hv1', daemonMode: 'coordinator', nowMs: realClock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
    await zk.createObject(n.root, n.entries);
    await zk.write([[paths.node('hv1').domainState, 'ready'], [paths.node('hv1').daemonState, 'run']]);
    vmd = startVmdProcess({
      dir, node: 'hv1', hosts: { hv1: hv1.clusterIp }, libvirtUri: hv1.libvirtUri, shutdownTimeoutS: 2,
      edits: [['pvc.system.configuration.logging.console_log_lines', LINES]],
    });
  });

  after(async () => {
    for (const n of [1, 2]) await hv1?.virsh(['destroy', uuid(n)]).catch(() => undefined);
    vmd?.child.kill('SIGTERM');
    await vmd?.exited;
    await zk?.close();
    await cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('consolelog follows the guest ticks and keeps at most console_log_lines lines; vnc "" without graphics', async () => {
    const u = await define(1, false);
    const t0 = realClock.now();
    const text = await waitFor('consolelog has 6+ ticks', 90_000, async () => {
      const v = (await zk.read(paths.domain(u).consoleLog)) ?? '';
      const ticks = [...v.matchAll(/pvc-guest con1 tick (\d+)/g)].map((m) => Number(m[1]));
      return ticks.length > 0 && Math.max(...ticks) >= 6 ? v : undefined;
    }, 250);
    console.log(`console: tick 6 in consolelog ${realClock.now() - t0} ms after state=start`);
    const lines = text.split('\n');
    assert.ok(lines.length <= LINES, `at most ${LINES} lines, got ${lines.length}`);
    assert.match(lines.at(-1) ?? '', /pvc-guest con1 tick \d+/);
    assert.equal(await zk.read(paths.domain(u).vnc), '');
    // It keeps following: a later tick shows up.
    const last = Number(/tick (\d+)\s*$/.exec(text)?.[1]);
    await waitFor('a later tick', 10_000, async () => {
      const v = (await zk.read(paths.domain(u).consoleLog)) ?? '';
      return [...v.matchAll(/tick (\d+)/g)].some((m) => Number(m[1]) > last) ? true : undefined;
    }, 250);
  });

  it('vnc = <listen>:<port> of the live XML for a guest with a VNC display; "" again once it stops', async () => {
    const u = await define(2, true);
    const vnc = await waitFor('vnc written', 60_000, async () => (await zk.read(paths.domain(u).vnc)) || undefined, 250);
    const live = (await hv1.virsh(['dumpxml', u])).stdout;
    const port = /<graphics type='vnc' port='(\d+)'/.exec(live)?.[1];
    assert.ok(port, 'libvirt assigned a VNC port');
    assert.equal(vnc, `127.0.0.1:${port}`);
    await zk.write([[paths.domain(u).state, 'stop']]);
    await waitFor('stopped', 30_000, async () => ((await domstate(u)) === 'absent' ? true : undefined), 200);
    await waitFor('vnc cleared', 10_000, async () => ((await zk.read(paths.domain(u).vnc)) === '' ? true : undefined), 200);
  });
});
