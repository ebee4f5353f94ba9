/**
 * Demo step: on a running harness cluster, starts the PVC node services on every host (the
 * supervisor in standalone mode, which spawns netd, vmd, cephd and keepaliled), defines a guest in
 * Zookeeper assigned to the first host (state `start`) and waits until vmd has it running and its
 * serial console prints heartbeats. Then live-migrates it through vmd by writing what
 * `pvc vm migrate --force-live` writes (state `migrate-live`, node = target, lastnode = source, one
 * ZK multi) and times it until virsh shows it running on the target only; the console tick counter
 * must carry on (same boot). Idempotent: a second run reuses what is already there, and when the
 * guest is migrated (lastnode set) it writes what `pvc vm unmigrate` writes (node = lastnode,
 * lastnode empty) and so brings it back.
 *
 *   node --conditions=development --import tsx tests/cluster/demo-guest.ts <cluster-name> <vm-name>
 */
import { describeError, realClock } from '@pvc/runtime';
import { connectZk, newDomainObject, paths, type ZkClient } from '@pvc/zk';
import { ipmitoolArgs, lastTick, listRunning, openCluster, waitFor } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import { allTicks, formatRun, migrate, type MigrationRun } from './migration-scenario.js';
import { initZkTree, readyNodes, startPvc, waitNodesRun, waitPrimary, writePvcConfig } from './pvc-node.js';

const UUID = '0de30000-0000-4000-8000-000000000001';

async function main(name: string, vm: string): Promise<void> {
  const cluster = await openCluster(name);
  const host = cluster.hosts[0];
  if (!host) throw new Error(`cluster "${name}" has no hosts`);
  const zk = await connectZk({ hosts: cluster.zk.connectString.split(','), clock: realClock });
  try {
    if ((await zk.read(paths.schema.version)) === undefined) await initZkTree(zk);
    const names = cluster.hosts.map((h) => h.name);
    const running = await Promise.all(names.map(async (n) => (await zk.read(paths.node(n).daemonState)) === 'run'));
    if (!running.every(Boolean)) {
      for (const h of cluster.hosts) await startPvc(h, writePvcConfig(cluster, h, { keepaliveInterval: 2, fenceIntervals: 3 }));
      await waitNodesRun(zk, names, 120_000);
      await readyNodes(zk, names);
    }
    const primary = await waitPrimary(zk, 60_000);
    if ((await zk.exists(paths.domain(UUID).root)) === undefined) {
      const xml = cluster.guest.domainXml(vm, { uuid: UUID, memoryMiB: 128 });
      const d = newDomainObject({ uuid: UUID, name: vm, node: host.name, state: 'start', xml });
      await zk.createObject(d.root, d.entries);
    }
    const where = await waitFor(`${vm} running (virsh)`, 90_000, async () => {
      for (const h of cluster.hosts) if ((await listRunning(h).catch((): string[] => [])).includes(vm)) return h;
      return undefined;
    }, 250);
    const log = cluster.guest.consoleLog(vm);
    await waitFor(`${vm}'s console heartbeat`, 60_000, async () => lastTick(log, vm));
    const mig = await migrateGuest(cluster, zk, vm, where);
    const quorum = await cluster.zk.hasQuorum();
    const now = mig.to;
    const back = mig.lastnode || undefined;
    process.stdout.write(
      [
        '',
        `PVC node services run on ${names.join(', ')} (daemon state run; primary coordinator ${primary}).`,
        `Guest ${vm} is defined in Zookeeper (/domains/${UUID}); vmd ran it on ${where.name}; its console (${log}) said:`,
        `  pvc-guest ${vm} tick ${mig.run.ticksBefore}`,
        `Live migration through vmd (${mig.kind}: ZK state migrate-live, node ${now.name}, lastnode "${mig.lastnode}"):`,
        `  ${formatRun(mig.run)}`,
        `  the console tick counter carried on from ${mig.run.ticksBefore} to ${mig.run.ticksAfter} (same boot, no restart); vmd runs ${vm} on ${now.name} now`,
        `Zookeeper ensemble ${cluster.zk.connectString}: quorum ${quorum ? 'yes' : 'NO'}`,
        `Node services' logs: ${cluster.workDir}/hosts/<host>/pvc/log/*.log`,
        '',
        'Try next:',
        `  virsh -c ${now.libvirtUri} list                 # the guest on ${now.name}`,
        `  tail -f ${log}`,
        `  bash scripts/cluster-ctl.sh status --name ${name}     # power, libvirtd and ZK quorum per host`,
        back
          ? `  bash scripts/demo.sh migrate   # migrate it back to ${back} through ZK: what 'pvc vm unmigrate' writes (state migrate-live, node ${back}, lastnode "")`
          : `  bash scripts/demo.sh migrate   # live-migrate it again through ZK (state migrate-live, node <target>, lastnode ${now.name})`,
        `  # fail ${now.name}: cut its network and power it off through its BMC; within ~8 s keepaliled`,
        `  # fences it and vmd restarts ${vm} on another host:`,
        `  ipmitool ${ipmitoolArgs(now.ipmi, ['chassis', 'power', 'off']).join(' ')}    # the simulator's test credentials`,
        'Tear down:',
        '  bash scripts/demo.sh down',
        '',
      ].join('\n'),
    );
    if (!quorum) throw new Error('the Zookeeper ensemble has no quorum');
  } finally {
    await zk.close();
  }
}

/** One migration of the demo: which way, where to, and the figures. */
interface DemoMigration {
  kind: 'migrate' | 'unmigrate';
  to: ClusterHost;
  /** The lastnode written (empty for unmigrate). */
  lastnode: string;
  run: MigrationRun;
}

/**
 * Migrates the guest off `from` through vmd: back to `lastnode` when it is set (unmigrate), else
 * to the next host. Fails when the console tick counter did not carry on (a reboot, not a migration).
 */
async function migrateGuest(cluster: Cluster, zk: ZkClient, vm: string, from: ClusterHost): Promise<DemoMigration> {
  const p = paths.domain(UUID);
  const last = (await zk.read(p.lastNode)) ?? '';
  const home = cluster.hosts.find((h) => h.name === last && h !== from);
  const i = cluster.hosts.indexOf(from);
  const next = cluster.hosts[(i + 1) % cluster.hosts.length];
  const to = home ?? next;
  if (!to || to === from) throw new Error(`no other host to migrate ${vm} to`);
  const kind = home ? 'unmigrate' : 'migrate';
  const lastnode = home ? '' : from.name;
  process.stdout.write(`demo: ${kind} ${vm} ${from.name} → ${to.name} (live, through vmd)…\n`);
  const run = await migrate({ cluster, zk }, { name: vm, uuid: UUID }, from, to, lastnode, 'migrate-live');
  const ticks = allTicks({ cluster }, { name: vm, uuid: UUID });
  const since = ticks.lastIndexOf(run.ticksBefore);
  const tail = since < 0 ? [] : ticks.slice(since);
  if (tail.length < 2 || !tail.every((t, k) => k === 0 || t > tail[k - 1]!)) {
    throw new Error(`${vm}'s console ticks did not carry on across the migration (${run.ticksBefore} → ${run.ticksAfter}): a reboot?`);
  }
  return { kind, to, lastnode, run };
}

const [name, vm] = process.argv.slice(2);
main(name ?? 'demo', vm ?? 'demo-vm1').catch((err: unknown) => {
  process.stderr.write(`demo: ${describeError(err)}\n`);
  process.exit(1);
});
