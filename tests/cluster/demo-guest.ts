/**
 * Demo step: boots the tiny guest on the first host of a running harness cluster and waits until its
 * serial console prints heartbeats. Until vmd exists the guest is created with virsh; issue 4 moves
 * this onto vmd (state=start in Zookeeper).
 *
 *   node --conditions=development --import tsx tests/cluster/demo-guest.ts <cluster-name> <vm-name>
 */
import { writeFileSync } from 'node:fs';
import { describeError } from '@pvc/runtime';
import { lastTick, listRunning, openCluster, waitFor } from './harness/index.js';

async function main(name: string, vm: string): Promise<void> {
  const cluster = await openCluster(name);
  const host = cluster.hosts[0];
  if (!host) throw new Error(`cluster "${name}" has no hosts`);
  if (!(await listRunning(host)).includes(vm)) {
    const xmlPath = `${cluster.workDir}/${vm}.xml`;
    writeFileSync(xmlPath, cluster.guest.domainXml(vm));
    const r = await host.virsh(['create', xmlPath]);
    if (r.exitCode !== 0) throw new Error(`virsh create ${vm} on ${host.name}: ${r.stderr.trim()}`);
  }
  const log = cluster.guest.consoleLog(vm);
  await waitFor(`${vm}'s console heartbeat`, 60_000, async () => lastTick(log, vm));
  const quorum = await cluster.zk.hasQuorum();
  process.stdout.write(
    [
      '',
      `Guest ${vm} runs on ${host.name}; its console (${log}) says:`,
      `  pvc-guest ${vm} tick ${lastTick(log, vm) ?? '?'}`,
      `Zookeeper ensemble ${cluster.zk.connectString}: quorum ${quorum ? 'yes' : 'NO'}`,
      '',
      'Try next:',
      `  virsh -c ${host.libvirtUri} list                 # the guest on ${host.name}`,
      `  tail -f ${log}`,
      `  virsh -c ${host.libvirtUri} migrate --live ${vm} qemu+tcp://${cluster.hosts[1]?.clusterIp ?? '<hv2>'}/system tcp://${cluster.hosts[1]?.clusterIp ?? '<hv2>'}`,
      `  bash scripts/demo.sh status                      # power, libvirtd and ZK quorum per host`,
      'Tear down:',
      '  bash scripts/demo.sh down',
      '',
    ].join('\n'),
  );
  if (!quorum) throw new Error('the Zookeeper ensemble has no quorum');
}

const [name, vm] = process.argv.slice(2);
main(name ?? 'demo', vm ?? 'demo-vm1').catch((err: unknown) => {
  process.stderr.write(`demo: ${describeError(err)}\n`);
  process.exit(1);
});
