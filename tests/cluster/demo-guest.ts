/**
 * Demo step: on a running harness cluster, starts the PVC node services on every host (the
 * supervisor in standalone mode, which spawns netd, vmd, cephd and keepaliled), defines a guest in
 * Zookeeper assigned to the first host (state `start`) and waits until vmd has it running and its
 * serial console prints heartbeats. Idempotent: a second run reuses what is already there.
 *
 *   node --conditions=development --import tsx tests/cluster/demo-guest.ts <cluster-name> <vm-name>
 */
import { describeError, realClock } from '@pvc/runtime';
import { connectZk, newDomainObject, paths } from '@pvc/zk';
import { ipmitoolArgs, lastTick, listRunning, openCluster, waitFor } from './harness/index.js';
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
    const quorum = await cluster.zk.hasQuorum();
    const other = cluster.hosts.find((h) => h !== where) ?? cluster.hosts[1];
    process.stdout.write(
      [
        '',
        `PVC node services run on ${names.join(', ')} (daemon state run; primary coordinator ${primary}).`,
        `Guest ${vm} is defined in Zookeeper (/domains/${UUID}); vmd runs it on ${where.name}; its console (${log}) says:`,
        `  pvc-guest ${vm} tick ${lastTick(log, vm) ?? '?'}`,
        `Zookeeper ensemble ${cluster.zk.connectString}: quorum ${quorum ? 'yes' : 'NO'}`,
        `Node services' logs: ${cluster.workDir}/hosts/<host>/pvc/log/*.log`,
        '',
        'Try next:',
        `  virsh -c ${where.libvirtUri} list                 # the guest on ${where.name}`,
        `  tail -f ${log}`,
        `  bash scripts/cluster-ctl.sh status --name ${name}     # power, libvirtd and ZK quorum per host`,
        `  # fail ${where.name}: cut its network and power it off through its BMC; within ~8 s keepaliled`,
        `  # fences it and vmd restarts ${vm} on another host:`,
        `  ipmitool ${ipmitoolArgs(where.ipmi, ['chassis', 'power', 'off']).join(' ')}    # the simulator's test credentials`,
        `  # live migration by hand (vmd's migrate comes with the vmd issue):`,
        `  virsh -c ${where.libvirtUri} migrate --live ${vm} qemu+tcp://${other?.clusterIp ?? '<hv2>'}/system tcp://${other?.clusterIp ?? '<hv2>'}`,
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

const [name, vm] = process.argv.slice(2);
main(name ?? 'demo', vm ?? 'demo-vm1').catch((err: unknown) => {
  process.stderr.write(`demo: ${describeError(err)}\n`);
  process.exit(1);
});
