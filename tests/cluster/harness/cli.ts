/**
 * The demo cluster from a shell (root only):
 *
 *   node --conditions=development --import tsx tests/cluster/harness/cli.ts up [--name pvct] [--hosts 3]
 *        [--coordinators 3] [--work-dir DIR] [--subnet N] [--bare-links]
 *   … cli.ts status [--name pvct] [--json]
 *   … cli.ts xml <vm-name> [--name pvct] [--memory 128]     domain XML of the tiny guest
 *   … cli.ts down [--name pvct]
 *
 * "up" leaves the cluster running; its options are recorded in /run/pvc-cluster/<name>/ so that
 * status/xml/down find it.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createExec, describeError } from '@pvc/runtime';
import { createCluster, openCluster } from './cluster.js';
import { ipmitoolArgs } from './ipmi.js';
import { planCluster } from './plan.js';
import { describeCluster, readClusterOptions, registeredClusters } from './registry.js';
import { HOST_POWER_SH } from './run.js';
import { destroyByName } from './teardown.js';
import type { Cluster } from './types.js';

const CLI = 'node --conditions=development --import tsx tests/cluster/harness/cli.ts';

function summary(c: Cluster, seconds: number): string {
  const rows = c.hosts.map(
    (h) =>
      `  ${h.name.padEnd(5)} ${h.netns.padEnd(12)} cluster ${h.clusterIp.padEnd(13)} storage ${h.storageIp.padEnd(13)} ` +
      `upstream ${h.upstreamIp.padEnd(13)} bmc ${h.ipmi.host}:${h.ipmi.port}${h.coordinator ? '  zk' : ''}`,
  );
  const h1 = c.hosts[0]!;
  return [
    `Cluster "${c.name}" is up (${seconds.toFixed(1)} s). Work dir ${c.workDir}`,
    ...rows,
    ...(c.bareLinks ? ['Bare links: these addresses (and Zookeeper\'s quorum) come with the node services\' bring-up (tests/cluster/demo-guest.ts starts them).'] : []),
    `Zookeeper:  ${c.zk.connectString}`,
    `libvirt:    virsh -c ${h1.libvirtUri} list --all        (one URI per host, reachable from every host and from here)`,
    `IPMI:       ipmitool ${ipmitoolArgs(h1.ipmi, ['chassis', 'power', 'status']).join(' ')}`,
    `In a host:  bash ${HOST_POWER_SH} ${h1.dirs.root} exec bash      (network-only: ip netns exec ${h1.netns} bash)`,
    `A guest:    ${CLI} xml vm1 --name ${c.name} > vm1.xml && virsh -c ${h1.libvirtUri} create vm1.xml`,
    `            console: ${c.guest.consoleLog('vm1')}`,
    `Status:     ${CLI} status --name ${c.name}`,
    `Tear down:  ${CLI} down --name ${c.name}`,
  ].join('\n');
}

async function up(name: string, v: Record<string, string | boolean | undefined>): Promise<void> {
  if ((await registeredClusters()).includes(name)) {
    throw new Error(`cluster "${name}" is already registered; run "${CLI} down --name ${name}" first`);
  }
  const num = (k: string): number | undefined => (typeof v[k] === 'string' ? Number(v[k]) : undefined);
  const t0 = Date.now();
  const c = await createCluster({
    name,
    hosts: num('hosts'),
    coordinators: num('coordinators'),
    subnet: num('subnet'),
    workDir: typeof v['work-dir'] === 'string' ? v['work-dir'] : undefined,
    bareLinks: v['bare-links'] === true,
    keepOnExit: true,
    log: (l) => process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${l}\n`),
  });
  process.stdout.write(`${summary(c, (Date.now() - t0) / 1000)}\n`);
}

async function status(name: string, json: boolean): Promise<void> {
  const c = await openCluster(name);
  const exec = createExec();
  const hosts = await Promise.all(
    c.hosts.map(async (h) => {
      const power = (await h.isPoweredOn()) ? 'on' : 'off';
      const r = await exec.run('virsh', ['-c', h.libvirtUri, 'version'], { timeoutMs: 5_000 }).catch(() => undefined);
      return { host: h.name, power, libvirtd: r?.exitCode === 0 ? 'answering' : 'not answering' };
    }),
  );
  const zk = await c.zk.status();
  const quorum = await c.zk.hasQuorum();
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...describeCluster(c), hosts, zk, quorum }, null, 2)}\n`);
    return;
  }
  for (const h of hosts) process.stdout.write(`${h.host}: power ${h.power}, libvirtd ${h.libvirtd}\n`);
  for (const s of zk) process.stdout.write(`zk ${s.id} (${s.host} ${s.address}): ${s.mode}\n`);
  process.stdout.write(`zookeeper quorum: ${quorum ? 'yes' : 'NO'}\n`);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string', default: 'pvct' },
      hosts: { type: 'string' },
      coordinators: { type: 'string' },
      subnet: { type: 'string' },
      'work-dir': { type: 'string' },
      'bare-links': { type: 'boolean', default: false },
      memory: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [cmd, arg] = positionals;
  const name = values.name ?? 'pvct';
  if (process.getuid?.() !== 0 && cmd !== undefined) throw new Error('the cluster CLI must run as root');
  switch (cmd) {
    case 'up':
      return up(name, values);
    case 'down': {
      // Not registered (e.g. /run was cleared): still sweep whatever carries the name.
      const opts = await readClusterOptions(name).catch(() => ({ name }));
      await destroyByName(name, planCluster(opts).workDir, createExec());
      process.stdout.write(`cluster "${name}" torn down\n`);
      return;
    }
    case 'status':
      return status(name, values.json ?? false);
    case 'xml': {
      if (!arg) throw new Error('usage: cli.ts xml <vm-name> [--name pvct] [--memory MiB]');
      const c = await openCluster(name);
      process.stdout.write(c.guest.domainXml(arg, { memoryMiB: values.memory ? Number(values.memory) : undefined }));
      return;
    }
    default:
      throw new Error(`usage: ${CLI} up|down|status|xml … (got "${cmd ?? ''}")`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`cluster cli: ${describeError(err)}\n`);
    process.exit(1);
  });
}
