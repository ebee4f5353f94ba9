/**
 * Probes shared by `no-target.test.ts` and `supervisor-death.test.ts`: a VM's Zookeeper keys, where
 * a guest runs (virsh on every powered host), a key's history from a ZK watch, the node services'
 * processes of a host (root-namespace pids, found through its network namespace), and a service's
 * JSON log lines. Each probe reads once; the tests wait with `waitUntil` around them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createExec, realClock } from '@pvc/runtime';
import { paths, type ZkClient } from '@pvc/zk';
import { clusterProcesses, HostPoweredOffError, type ClusterHost } from './harness/index.js';
import type { FailoverCluster } from './failover-scenario.js';
import { pvcDirs } from './pvc-node.js';
import { waitUntil } from '../support/wait.js';

const rootExec = createExec();

/** The keys of one VM that recovery, the retry and a flush write. */
export interface VmKeys {
  state: string;
  node: string;
  lastNode: string;
  failedReason: string;
  /** `node_autostart` as stored (`True` / `False`). */
  autostart: string;
}

export async function vmKeys(zk: ZkClient, uuid: string): Promise<VmKeys> {
  const d = paths.domain(uuid);
  const [state, node, lastNode, failedReason, autostart] = await Promise.all([d.state, d.node, d.lastNode, d.failedReason, d.nodeAutostart].map(async (k) => (await zk.read(k)) ?? ''));
  return { state: state!, node: node!, lastNode: lastNode!, failedReason: failedReason!, autostart: autostart! };
}

/**
 * One read of a value that has already settled (the test acted and the thing it reads is final),
 * retried for up to 15 s when it throws: the test's own ZK client may be between servers under load
 * (CONNECTION_LOSS), which says nothing about the cluster under test.
 */
export function settled<T>(what: string, read: () => Promise<T>): Promise<T> {
  return waitUntil(read, { what, until: () => true, timeoutMs: 15_000, intervalMs: 200 });
}

/** Hosts on which `uuid` is in state running (virsh); a powered-off host runs nothing and is skipped. */
export async function runningHosts(hosts: readonly ClusterHost[], uuid: string): Promise<string[]> {
  const on = await Promise.all(hosts.map(async (h) => {
    try {
      const r = await h.virsh(['list', '--uuid', '--state-running'], { timeoutMs: 10_000 });
      if (r.exitCode !== 0) throw new Error(`virsh list on ${h.name}: ${r.stderr.trim()}`);
      return r.stdout.split('\n').map((l) => l.trim()).includes(uuid) ? [h.name] : [];
    } catch (err) {
      if (err instanceof HostPoweredOffError) return [];
      throw err;
    }
  }));
  return on.flat();
}

/** Waits until virsh shows `uuid` running on exactly the hosts `want` (sorted names; [] = nowhere). */
export async function waitRunsOn(fc: FailoverCluster, uuid: string, want: readonly string[], what: string, timeoutMs = 60_000): Promise<void> {
  const target = [...want].sort().join(',');
  await waitUntil(async () => (await runningHosts(fc.cluster.hosts, uuid)).sort().join(','), {
    what: `${what} running on [${target}] only (virsh)`, until: (v) => v === target, timeoutMs, intervalMs: 250,
  });
}

/** `domid` of `uuid` on `host` ('' when not running there). */
export async function domId(host: ClusterHost, uuid: string): Promise<string> {
  const r = await host.virsh(['domid', uuid]);
  return r.exitCode === 0 ? r.stdout.trim() : '';
}

/** Defines a 96 MiB guest on `target` (optionally with a node limit), starts it with `--wait`, waits for virsh to show it there. */
export async function defineAndStart(fc: FailoverCluster, g: { name: string; uuid: string }, target: string, limit?: readonly string[]): Promise<void> {
  const xml = fc.cluster.guest.domainXml(g.name, { uuid: g.uuid, memoryMiB: 96 });
  await fc.cli.define(xml, target, ...(limit ? ['--node-limit', limit.join(',')] : []));
  await fc.cli.ok('vm', 'start', g.name, '--wait', '--wait-timeout', '120');
  await waitRunsOn(fc, g.uuid, [target], g.name, 120_000);
}

/** Every value a key took (as a level-based watch saw it: a value that lasted less than a round trip may be missed). */
export class KeyHistory {
  readonly values: { at: number; value: string | undefined }[] = [];
  private readonly unwatch: () => void;

  constructor(zk: ZkClient, readonly key: string) {
    this.unwatch = zk.watchData(key, (v) => {
      if (this.values.at(-1)?.value !== v?.data) this.values.push({ at: realClock.now(), value: v?.data });
    });
  }

  /** Values seen at or after `since` (epoch ms), in order. */
  since(since: number): (string | undefined)[] {
    return this.values.filter((v) => v.at >= since).map((v) => v.value);
  }

  /** First time (epoch ms) `value` was seen at or after `since`. */
  firstAt(value: string, since = 0): number | undefined {
    return this.values.find((v) => v.at >= since && v.value === value)?.at;
  }

  stop(): void {
    this.unwatch();
  }
}

/** One node-service process of a host: its pid in the root namespace. */
export interface NodeProc {
  pid: number;
  /** `supervisor`, `netd`, `vmd`, `cephd`, `keepaliled`, or `virsh-event` (vmd's event stream). */
  service: string;
  cmd: string;
}

/** The live node-service processes in `host`'s network namespace (the built apps and vmd's `virsh event`). */
export async function nodeServiceProcs(host: ClusterHost): Promise<NodeProc[]> {
  const out: NodeProc[] = [];
  for (const line of await clusterProcesses(rootExec, host.netns)) {
    const [pid, ...rest] = line.split(' ');
    const cmd = rest.join(' ');
    const app = /\/apps\/([a-z]+)\/dist\/main\.js/.exec(cmd)?.[1];
    if (app) out.push({ pid: Number(pid), service: app, cmd });
    else if (/\bvirsh\b.*\bevent\b/.test(cmd)) out.push({ pid: Number(pid), service: 'virsh-event', cmd });
  }
  return out;
}

/** Gone: no such process, or a zombie (it runs nothing any more). */
export function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** The JSON lines of `<service>.log` on `host` written at or after `since` (epoch ms). */
export function serviceLog(host: ClusterHost, service: string, since: number): Record<string, unknown>[] {
  const file = join(pvcDirs(host).log, `${service}.log`);
  if (!existsSync(file)) return [];
  const out: Record<string, unknown>[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      const at = typeof o.time === 'number' ? o.time : Date.parse(String(o.time));
      if (at >= since) out.push(o);
    } catch {
      // a line cut by a crash: not ours to judge here
    }
  }
  return out;
}
