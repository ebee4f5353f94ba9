import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import yaml from 'js-yaml';

/** A VM of a scenario: name, home node, memory (MiB). */
export interface SimVmSpec {
  name: string;
  node: string;
  memoryMiB: number;
}

/** `cluster.yaml` of a scenario folder. */
export interface ClusterSpec {
  nodes: string[];
  coordinators: string[];
  /** Memory of every node, MiB (default 8192). */
  memoryMiB: number;
  keepaliveInterval: number;
  fenceIntervals: number;
  suicideIntervals: number;
  successfulFence: 'migrate' | 'none';
  failedFence: 'migrate' | 'none';
  /** The suicide peer check (`peer_check_port`): `peer_check: on` (the default, as in the config) or `off`. */
  peerCheck: boolean;
  vms: SimVmSpec[];
  /** Virtual seconds to run after the last event (default 60). */
  settleS: number;
  /** Every node's ZK session timeout, ms (`zk_session_timeout` in seconds; default 4). */
  zkSessionTimeoutMs: number;
}

/** One timed event of `events.txt`: `<seconds> <verb> [args…]`. */
export interface SimEvent {
  atMs: number;
  verb: string;
  args: string[];
  line: string;
}

const VERBS: Record<string, number> = {
  power: 2, network: 2, 'zk-cut': 2, ipmi: 2, 'zk-expire': 1, zk: 1, maintenance: 1, ready: 1, flush: 1, primary: 1, 'ipmi-latency': 2, show: 1,
};

/** Parses `events.txt` (comments with #, blank lines ignored). Throws naming the bad line. */
export function parseEvents(text: string): SimEvent[] {
  const out: SimEvent[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const [at, verb, ...args] = line.split(/\s+/);
    const want = verb === undefined ? undefined : VERBS[verb];
    if (at === undefined || !/^\d+(\.\d+)?$/.test(at) || want === undefined || args.length !== want) {
      throw new Error(`events.txt line ${i + 1}: cannot read "${raw.trim()}"`);
    }
    out.push({ atMs: Math.round(Number(at) * 1000), verb: verb as string, args, line });
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

/** `on`/`off` (or a YAML boolean); absent: `dflt`. Throws on anything else. */
function onOff(v: unknown, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (v === true || v === 'on') return true;
  if (v === false || v === 'off') return false;
  throw new Error(`cluster.yaml: expected on or off, got ${JSON.stringify(v)}`);
}

/** Parses a cluster description (YAML), with defaults. */
export function parseCluster(text: string): ClusterSpec {
  const d = (yaml.load(text) ?? {}) as Record<string, unknown>;
  const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(/[\s,]+/).filter(Boolean) : Array.isArray(v) ? v.map(String) : []);
  const nodes = list(d.nodes);
  const vms = list(d.vms).map((spec) => {
    const m = /^([\w-]+)@([\w-]+)(?::(\d+))?$/.exec(spec);
    if (!m?.[1] || !m[2]) throw new Error(`cluster.yaml: bad vm "${spec}" (want name@node[:MiB])`);
    return { name: m[1], node: m[2], memoryMiB: Number(m[3] ?? 1024) };
  });
  return {
    nodes,
    coordinators: d.coordinators === undefined ? nodes.slice(0, 3) : list(d.coordinators),
    memoryMiB: Number(d.memory ?? 8192),
    keepaliveInterval: Number(d.keepalive_interval ?? 1),
    fenceIntervals: Number(d.fence_intervals ?? 3),
    suicideIntervals: Number(d.suicide_intervals ?? 0),
    successfulFence: d.successful_fence === 'none' ? 'none' : 'migrate',
    failedFence: d.failed_fence === 'migrate' ? 'migrate' : 'none',
    peerCheck: onOff(d.peer_check, true),
    vms,
    settleS: Number(d.settle ?? 60),
    zkSessionTimeoutMs: Number(d.zk_session_timeout ?? 4) * 1000,
  };
}

/** A scenario folder: cluster.yaml, events.txt, expected.log. */
export async function loadScenario(dir: string): Promise<{ cluster: ClusterSpec; events: SimEvent[]; expected: string | undefined }> {
  const [c, e, x] = await Promise.all(['cluster.yaml', 'events.txt', 'expected.log'].map((f) => readFile(join(dir, f), 'utf8').catch(() => undefined)));
  if (c === undefined || e === undefined) throw new Error(`${dir}: cluster.yaml and events.txt are required`);
  return { cluster: parseCluster(c), events: parseEvents(e), expected: x };
}
