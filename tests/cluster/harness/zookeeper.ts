import { connect } from 'node:net';
import { zooCfgTimingLines } from '@pvc/zk';
import { join } from 'node:path';
import { ZK_CLIENT_PORT } from './plan.js';
import type { ClusterPlan, HostPlan } from './plan.js';
import { ZK_CONF_DIR } from './prereqs.js';
import { waitFor } from './run.js';
import type { ZkEnsemble, ZkServerStatus } from './types.js';

/**
 * zoo.cfg of one coordinator: peers are reached on their cluster addresses (`server.N`), but every
 * port — client, quorum 2888, election 3888 — listens on every address of the host's own network
 * namespace (loopback and its private 10.200.x addresses, nothing else exists there;
 * `quorumListenOnAllIPs`): the server starts at power-on, and with bare links the cluster address
 * appears only when the node's bring-up puts it on, so it cannot bind it; the quorum forms once
 * enough coordinators have done their bring-up. The supervisor's `ruok` probe and other hosts use
 * the cluster address.
 */
export function zooCfg(plan: ClusterPlan, host: HostPlan): string {
  const coords = plan.hosts.filter((h) => h.coordinator);
  const lines = [
    `# Zookeeper server ${host.index} of cluster ${plan.name}, written by tests/cluster/harness.`,
    // The timing PVC ships for its coordinators (deploy/zookeeper/zoo.cfg).
    ...zooCfgTimingLines(),
    `dataDir=${join(host.dirs.zk, 'data')}`,
    `clientPort=${ZK_CLIENT_PORT}`,
    'clientPortAddress=0.0.0.0',
    'quorumListenOnAllIPs=true',
    'maxClientCnxns=0',
    '4lw.commands.whitelist=*',
    'admin.enableServer=false',
    'autopurge.purgeInterval=1',
  ];
  if (coords.length > 1) {
    for (const c of coords) lines.push(`server.${c.index}=${c.ips.cluster}:2888:3888`);
  }
  return `${lines.join('\n')}\n`;
}

/** `java …` command line of one server: small heap, serial GC, log to the console (the service log). */
export function zkServerCommand(host: HostPlan): { command: string; args: string[] } {
  // zookeeper.jar's manifest Class-Path names its dependencies. "/usr/share/java/*" does not work:
  // it holds several slf4j bindings and log4j-over-slf4j, and the server dies at start.
  const cp = [ZK_CONF_DIR, '/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-log4j12.jar', '/usr/share/java/log4j-1.2.jar'].join(':');
  return {
    command: 'java',
    args: [
      '-Xmx128m',
      '-Xms32m',
      '-Xss512k',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-XX:CICompilerCount=1',
      `-Dzookeeper.log.dir=${host.dirs.log}`,
      '-Dzookeeper.root.logger=INFO,CONSOLE',
      `-Dlog4j.configuration=file:${ZK_CONF_DIR}/log4j.properties`,
      '-cp',
      cp,
      'org.apache.zookeeper.server.quorum.QuorumPeerMain',
      join(host.dirs.zk, 'zoo.cfg'),
    ],
  };
}

/** Sends a four-letter word to ip:port and returns the whole answer (rejects after timeoutMs). */
export function fourLetterWord(ip: string, port: number, word: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: ip, port });
    let out = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`4lw "${word}" to ${ip}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.end(word));
    sock.on('data', (d: string) => (out += d));
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/** Parses the Mode line of a `srvr` answer. */
export function parseMode(srvr: string): ZkServerStatus['mode'] {
  const m = /^Mode: (\w+)/m.exec(srvr)?.[1];
  return m === 'leader' || m === 'follower' || m === 'standalone' || m === 'observer' ? m : 'down';
}

/** Quorum: a leader (or one standalone server) and a majority of the ensemble serving. */
export function quorumFrom(statuses: readonly ZkServerStatus[]): boolean {
  if (statuses.length === 1) return statuses[0]!.mode === 'standalone';
  const leaders = statuses.filter((s) => s.mode === 'leader').length;
  const serving = statuses.filter((s) => s.mode === 'leader' || s.mode === 'follower').length;
  return leaders === 1 && serving > statuses.length / 2;
}

/** The ensemble handle of a cluster (queries go from the root namespace over the cluster bridge). */
export function createZkEnsemble(plan: ClusterPlan): ZkEnsemble {
  const servers = plan.hosts
    .filter((h) => h.coordinator)
    .map((h) => ({ id: h.index, host: h.name, address: h.ips.cluster, clientPort: ZK_CLIENT_PORT }));
  const status = async (): Promise<ZkServerStatus[]> =>
    Promise.all(
      servers.map(async (s) => {
        const mode = await fourLetterWord(s.address, s.clientPort, 'srvr').then(parseMode, () => 'down' as const);
        return { id: s.id, host: s.host, address: s.address, mode };
      }),
    );
  const hasQuorum = async (): Promise<boolean> => quorumFrom(await status());
  return {
    connectString: servers.map((s) => `${s.address}:${s.clientPort}`).join(','),
    servers,
    status,
    hasQuorum,
    async waitForQuorum(timeoutMs = plan.readyTimeoutMs) {
      await waitFor(`Zookeeper quorum of cluster ${plan.name}`, timeoutMs, async () => ((await hasQuorum()) ? true : undefined), 500);
    },
    async waitForAllServing(timeoutMs = plan.readyTimeoutMs) {
      const serving = (s: ZkServerStatus): boolean => s.mode !== 'down' && s.mode !== 'observer';
      await waitFor(`every Zookeeper server of cluster ${plan.name} serving`, timeoutMs, async () => {
        const all = await status();
        if (all.every(serving) && quorumFrom(all)) return true;
        throw new Error(all.map((s) => `${s.host}=${s.mode}`).join(' '));
      }, 500);
    },
  };
}
