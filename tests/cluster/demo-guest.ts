/**
 * Demo step: on a running harness cluster, everything an administrator would do, done with the
 * `pvc` command: `pvc cluster init`, then the PVC node services on every host (the supervisor in
 * standalone mode, which spawns netd, vmd, cephd and keepaliled), `pvc node ready --wait` for each,
 * `pvc vm define --target <first host> --migration-method live` and `pvc vm start --wait`; waits
 * until its serial console prints heartbeats. Then `pvc vm migrate --target <next host>` (live),
 * timed until virsh shows it running on the target only; the console tick counter must carry on
 * (same boot). Registers the cluster as the default `pvc` connection `demo`, so plain `pvc vm list`
 * works afterwards. Idempotent: a second run reuses what is there, and when the guest is migrated
 * (lastnode set) it runs `pvc vm unmigrate` and so brings it back.
 *
 *   node --conditions=development --import tsx tests/cluster/demo-guest.ts <cluster-name> <vm-name>
 */
import { describeError, realClock } from '@pvc/runtime';
import { connectZk, paths, type ZkClient } from '@pvc/zk';
import { ipmitoolArgs, lastTick, listRunning, openCluster, waitFor } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';
import { allTicks, formatRun, migrate, migrationArgs, type MigrationRun } from './migration-scenario.js';
import { pvcCli, type PvcCli } from './pvc-cli.js';
import { FloatingAddressWatch } from './cluster-watch.js';
import { floatingAddresses, startPvc, waitFloatingOnPrimary, waitNodesRun, waitPrimary, writePvcConfig } from './pvc-node.js';

const UUID = '0de30000-0000-4000-8000-000000000001';

async function main(name: string, vm: string): Promise<void> {
  const cluster = await openCluster(name);
  const host = cluster.hosts[0];
  if (!host) throw new Error(`cluster "${name}" has no hosts`);
  const settings = { keepaliveInterval: 2, fenceIntervals: 3 };
  // Bare links (`cluster-ctl.sh up --bare-links`): the node services' bring-up gives the hosts their
  // addresses, and only then can the Zookeeper quorum form, so they start first (before `cluster init`).
  const bare = cluster.bareLinks;
  if (bare && !(await cluster.zk.hasQuorum())) {
    for (const h of cluster.hosts) await startPvc(h, writePvcConfig(cluster, h, settings));
    await cluster.zk.waitForAllServing(120_000);
  }
  const zk = await connectZk({ hosts: cluster.zk.connectString.split(','), clock: realClock });
  try {
    const cli = pvcCli(cluster.zk.connectString);
    await cli.ok('connection', 'add', name, '--hosts', cluster.zk.connectString, '--description', 'the demo cluster (network namespaces)', '--default');
    if ((await zk.read(paths.schema.version)) === undefined) await cli.ok('cluster', 'init', '--name', name);
    const names = cluster.hosts.map((h) => h.name);
    const running = await Promise.all(names.map(async (n) => (await zk.read(paths.node(n).daemonState)) === 'run'));
    if (!running.every(Boolean)) {
      // With bare links they are running already: the quorum needed them.
      if (!bare) for (const h of cluster.hosts) await startPvc(h, writePvcConfig(cluster, h, settings));
      await waitNodesRun(zk, names, 120_000);
      for (const n of names) await cli.ok('node', 'ready', n, '--wait', '--wait-timeout', '120');
    }
    const primary = await waitPrimary(zk, 60_000);
    // With bare links netd puts the floating addresses on the primary's bridges.
    const floating = bare ? await floatingLine(cluster, zk) : undefined;
    if ((await zk.exists(paths.domain(UUID).root)) === undefined) {
      await cli.define(cluster.guest.domainXml(vm, { uuid: UUID, memoryMiB: 128 }), host.name, '--migration-method', 'live');
      await cli.ok('vm', 'start', vm, '--wait', '--wait-timeout', '120');
    }
    const where = await waitFor(`${vm} running (virsh)`, 90_000, async () => {
      for (const h of cluster.hosts) if ((await listRunning(h).catch((): string[] => [])).includes(vm)) return h;
      return undefined;
    }, 250);
    const log = cluster.guest.consoleLog(vm);
    await waitFor(`${vm}'s console heartbeat`, 60_000, async () => lastTick(log, vm));
    const mig = await migrateGuest(cluster, zk, cli, vm, where);
    const vmList = await cli.ok('vm', 'list');
    const nodeList = await cli.ok('node', 'list');
    const quorum = await cluster.zk.hasQuorum();
    const now = mig.to;
    const back = mig.lastnode || undefined;
    process.stdout.write(
      [
        '',
        `PVC node services run on ${names.join(', ')} (daemon state run; primary coordinator ${primary}).`,
        `Guest ${vm} was defined and started with pvc (/domains/${UUID}); vmd ran it on ${where.name}; its console (${log}) said:`,
        `  pvc-guest ${vm} tick ${mig.run.ticksBefore}`,
        `Live migration through vmd (${cli.shell(mig.args).replace(/ --zk \S+/, '')}):`,
        `  ${formatRun(mig.run)}`,
        `  the console tick counter carried on from ${mig.run.ticksBefore} to ${mig.run.ticksAfter} (same boot, no restart); vmd runs ${vm} on ${now.name} now`,
        ...(floating ? [floating] : []),
        `Zookeeper ensemble ${cluster.zk.connectString}: quorum ${quorum ? 'yes' : 'NO'}`,
        `Node services' logs: ${cluster.workDir}/hosts/<host>/pvc/log/*.log`,
        '',
        '$ pvc node list',
        nodeList.trimEnd(),
        '$ pvc vm list',
        vmList.trimEnd(),
        '',
        `Try next (pvc talks to this cluster: connection "${name}" is the default):`,
        `  pvc cluster status`,
        `  pvc vm info ${vm}; pvc vm log ${vm} --follow`,
        back
          ? `  pvc vm unmigrate ${vm} --wait      # back to ${back}, live (or: bash scripts/demo.sh migrate)`
          : `  pvc vm migrate ${vm} --wait        # live, to the node the selector picks (or: bash scripts/demo.sh migrate)`,
        `  pvc node flush ${now.name} --wait; pvc node ready ${now.name} --wait`,
        `  virsh -c ${now.libvirtUri} list                 # the guest on ${now.name}`,
        `  tail -f ${log}`,
        `  bash scripts/cluster-ctl.sh status --name ${name}     # power, libvirtd and ZK quorum per host`,
        `  # fail ${now.name}: cut its network and power it off through its BMC; within ~8 s keepaliled`,
        `  # fences it and vmd restarts ${vm} on another host (watch: pvc cluster status; pvc vm list):`,
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

/** Waits until the primary alone holds the floating addresses; says where they are. */
async function floatingLine(cluster: Cluster, zk: ZkClient): Promise<string> {
  const watch = new FloatingAddressWatch(cluster.hosts, Object.values(floatingAddresses(cluster)));
  const primary = await waitFloatingOnPrimary(zk, watch, 60_000);
  const held = [...(await watch.holders())].map(([ip, hs]) => `${ip} (${hs.join(', ')})`);
  return `Floating addresses, put on the primary's bridges by netd: ${held.join(', ')}; only ${primary} holds them`;
}

/** One migration of the demo: which way, where to, and the figures. */
interface DemoMigration {
  kind: 'migrate' | 'unmigrate';
  to: ClusterHost;
  /** The lastnode written (empty for unmigrate). */
  lastnode: string;
  run: MigrationRun;
  /** The pvc arguments that asked for it. */
  args: string[];
}

/**
 * Migrates the guest off `from` through vmd: back to `lastnode` when it is set (unmigrate), else
 * to the next host. Fails when the console tick counter did not carry on (a reboot, not a migration).
 */
async function migrateGuest(cluster: Cluster, zk: ZkClient, cli: PvcCli, vm: string, from: ClusterHost): Promise<DemoMigration> {
  const p = paths.domain(UUID);
  const last = (await zk.read(p.lastNode)) ?? '';
  const home = cluster.hosts.find((h) => h.name === last && h !== from);
  const i = cluster.hosts.indexOf(from);
  const next = cluster.hosts[(i + 1) % cluster.hosts.length];
  const to = home ?? next;
  if (!to || to === from) throw new Error(`no other host to migrate ${vm} to`);
  const kind = home ? 'unmigrate' : 'migrate';
  const lastnode = home ? '' : from.name;
  const args = migrationArgs(kind, vm, to.name);
  process.stdout.write(`demo: ${cli.shell(args)}   (${from.name} → ${to.name}, live, through vmd)…\n`);
  const run = await migrate({ cluster, zk, cli }, { name: vm, uuid: UUID }, from, to, kind);
  const ticks = allTicks({ cluster }, { name: vm, uuid: UUID });
  const since = ticks.lastIndexOf(run.ticksBefore);
  const tail = since < 0 ? [] : ticks.slice(since);
  if (tail.length < 2 || !tail.every((t, k) => k === 0 || t > tail[k - 1]!)) {
    throw new Error(`${vm}'s console ticks did not carry on across the migration (${run.ticksBefore} → ${run.ticksAfter}): a reboot?`);
  }
  return { kind, to, lastnode, run, args };
}

const [name, vm] = process.argv.slice(2);
main(name ?? 'demo', vm ?? 'demo-vm1').catch((err: unknown) => {
  process.stderr.write(`demo: ${describeError(err)}\n`);
  process.exit(1);
});
