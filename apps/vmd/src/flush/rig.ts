import { FakeExec, VirtualClock, silentLogger, type Logger } from '@pvc/runtime';
import { newDomainObject, newNodeObject, paths } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeHypervisor } from '../host/fake-hypervisor.js';
import { createVirshMigrator, peerAddress } from '../host/virsh-migrate.js';
import { DEFAULT_TIMINGS } from '../migration/deps.js';
import { MigrationTracker } from '../migration/tracker.js';
import { Reconciler } from '../reconciler.js';
import { testXml } from '../testing.js';
import { NodeFlusher } from './flusher.js';
import type { FlushLimits } from './plan.js';

/** Test-only: three vmds (reconciler + migrations + flusher) on one fake ZK, in virtual time. */
export const NODES = ['hv1', 'hv2', 'hv3'] as const;
export type NodeName = (typeof NODES)[number];

export const uuidOf = (i: number): string => `dddddddd-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Knobs of {@link flushRig}; `methods` / `memoryMiB` by VM number (1-based). */
export interface FlushRigOpts {
  vms: number;
  limits?: Partial<FlushLimits>;
  migrateMs?: number;
  logger?: Logger;
  methods?: Record<number, string>;
  /** XML `<memory>` (default 256); above every node's free memory (11000) no target fits. */
  memoryMiB?: Record<number, number>;
  /** A guest's ACPI shutdown takes this long (default: never, vmd destroys after its 10 s timeout). */
  acpiShutdownMs?: number;
}

/**
 * `virsh migrate` takes `migrateMs` of virtual time and moves the fake domain; a UUID in
 * `refuse` fails it (as an unreachable target). Every VM starts running on hv1.
 */
export async function flushRig(opts: FlushRigOpts) {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  for (const p of [paths.nodes, paths.domains]) await admin.ensurePath(p);
  const hvs = Object.fromEntries(NODES.map((n) => [n, new FakeHypervisor({ clock, acpiShutdownMs: opts.acpiShutdownMs })])) as Record<NodeName, FakeHypervisor>;
  const refuse = new Set<string>();
  const exec = new FakeExec();
  exec.on('virsh', { exitCode: 0 });
  for (const from of NODES) {
    exec.on(`virsh -c qemu+tcp://${from}/system migrate `, async (call) => {
      const [uuid, , stream] = call.args.slice(-3) as [string, string, string];
      const to = stream.replace('tcp://', '') as NodeName;
      await clock.sleep(opts.migrateMs ?? 2000);
      if (refuse.has(uuid)) return { exitCode: 1, stdout: '', stderr: `error: unable to connect to server at '${to}:16509': Connection refused\n` };
      hvs[from].vanish(uuid);
      hvs[to].addRunning(uuid, uuid);
      return { exitCode: 0, stdout: '', stderr: '' };
    });
  }
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  const flushers = {} as Record<NodeName, NodeFlusher>;
  for (const name of NODES) {
    const n = newNodeObject({ name, daemonMode: 'hypervisor', nowMs: clock.now(), staticData: '8 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
    await admin.createObject(n.root, n.entries);
    const k = paths.node(name);
    await admin.write([[k.domainState, 'ready'], [k.daemonState, 'run'], [k.memTotal, '16384'], [k.memFree, '11000'], [k.memUsed, '4000']]);
    const zk = await server.connect();
    const uri = `qemu+tcp://${name}/system`;
    const logger = opts.logger ?? silentLogger();
    const migrations = new MigrationTracker({
      zk, hv: hvs[name], clock, logger, node: name, migrator: createVirshMigrator(exec, uri),
      peer: (t) => peerAddress(uri, name, t), shutdownTimeoutMs: 10_000, timings: DEFAULT_TIMINGS,
    });
    flushers[name] = new NodeFlusher({ zk, hv: hvs[name], clock, logger, node: name, limits: opts.limits });
    const r = new Reconciler({ zk, hv: hvs[name], clock, logger, node: name, domainType: 'qemu', shutdownTimeoutMs: 10_000, statsIntervalMs: 5000, migrations, flusher: flushers[name] });
    migrations.onDone = () => r.trigger();
    runs.push(r.run(ac.signal).finally(() => zk.close()));
  }
  const uuids: string[] = [];
  for (let i = 1; i <= opts.vms; i++) {
    const u = uuidOf(i);
    uuids.push(u);
    const mem = opts.memoryMiB?.[i] ?? 256;
    hvs.hv1.addRunning(u, `vm${i}`, mem);
    const d = newDomainObject({ uuid: u, name: `vm${i}`, xml: testXml(`vm${i}`, u, mem), node: 'hv1', state: 'start', migrationMethod: opts.methods?.[i] });
    await admin.createObject(d.root, d.entries);
  }
  const where = (u: string): NodeName[] => NODES.filter((n) => hvs[n].isRunning(u));
  const domainState = (n: NodeName): Promise<string | undefined> => admin.read(paths.node(n).domainState);
  const setDomainState = (n: NodeName, v: string): Promise<void> => admin.write([[paths.node(n).domainState, v]]);
  /** A VM's raw `state`, `node`, `lastnode`, `node_autostart`, `failedreason` (absent = ''). */
  const vmKeys = async (u: string): Promise<string[]> => {
    const p = paths.domain(u);
    return Promise.all([p.state, p.node, p.lastNode, p.nodeAutostart, p.failedReason].map(async (k) => (await admin.read(k)) ?? ''));
  };
  const stop = async (): Promise<void> => {
    ac.abort();
    await clock.advance(10);
    await Promise.all(runs);
    await admin.close();
  };
  return { clock, admin, hvs, exec, refuse, flushers, uuids, where, domainState, setDomainState, vmKeys, stop };
}
