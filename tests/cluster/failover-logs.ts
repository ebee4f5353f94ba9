/**
 * Reading what the failover left in files: the guests' console logs (shared by every host) and the
 * coordinators' keepaliled log (`<log_directory>/keepaliled.log`, pino JSON lines with ISO times).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { realClock } from '@pvc/runtime';
import type { Cluster, ClusterHost } from './harness/index.js';
import { pvcDirs } from './pvc-node.js';

/** One keepaliled event line of interest. */
export interface LogEvent {
  at: number;
  host: string;
  msg: string;
  detail: string;
}

/** Messages that make up a fence: the keepaliled events and the IPMI steps. */
const FENCE_MESSAGES = new Set(['breaking a lock held by a node silent for the detection window (its session has not expired yet)', 'node-dead', 'fence-start', 'fence step', 'fence step failed', 'fence finished', 'fence failed', 'fence-result', 'vm-recovered', 'vm-stopped', 'vm-left', 'recovery-done', 'node-alive']);

/** Current length of every guest's console log: heartbeats after it come from a new instance. */
export function consoleOffsets(cluster: Cluster, guests: readonly { name: string }[]): Map<string, number> {
  return new Map(guests.map((g) => {
    const f = cluster.guest.consoleLog(g.name);
    return [g.name, existsSync(f) ? statSync(f).size : 0];
  }));
}

/** Now, if a heartbeat line follows `offset` (callers poll every ~100 ms and keep the first time), else undefined. */
export function firstTickAfter(cluster: Cluster, guest: { name: string }, offset: number): number | undefined {
  const f = cluster.guest.consoleLog(guest.name);
  if (!existsSync(f)) return undefined;
  const size = statSync(f).size;
  if (size <= offset) return undefined;
  const fd = openSync(f, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    return new RegExp(`pvc-guest ${guest.name} tick \\d+`).test(buf.toString('utf8')) ? realClock.now() : undefined;
  } finally {
    closeSync(fd);
  }
}

function describe(line: Record<string, unknown>): string {
  // keepaliled's event lines carry the node they are about as `subject` (`node` is the logger's own).
  const o: Record<string, unknown> = { ...line, node: line.subject ?? line.node };
  const keys = ['node', 'vm', 'target', 'fencer', 'holder', 'resumed', 'step', 'ok', 'durationMs', 'outcome', 'reason', 'silentMs', 'recovered', 'left', 'detail'];
  return keys.filter((k) => o[k] !== undefined).map((k) => `${k}=${typeof o[k] === 'string' ? o[k] : JSON.stringify(o[k])}`).join(' ');
}

/** The fence-related keepaliled log lines of `hosts` since `since` (epoch ms), in time order. */
export function keepaliledEvents(hosts: readonly ClusterHost[], since: number): LogEvent[] {
  return serviceLines(hosts, 'keepaliled', [...FENCE_MESSAGES], since).map((l) => ({ at: l.at, host: l.host, msg: l.msg, detail: describe(l.o) }));
}

/** cephd's line when it marked a fenced node's OSDs down during fence recovery's lock flush. */
export const MARKED_DOWN = 'marked the fenced node\'s OSDs down';

/** One pino JSON line of a pvc service's log. */
export interface ServiceLine {
  at: number;
  host: string;
  msg: string;
  o: Record<string, unknown>;
}

/** `<service>.log` lines of `hosts` since `since` (epoch ms) whose msg is in `msgs`, in time order. */
export function serviceLines(hosts: readonly ClusterHost[], service: string, msgs: readonly string[], since: number): ServiceLine[] {
  const out: ServiceLine[] = [];
  for (const h of hosts) {
    const file = join(pvcDirs(h).log, `${service}.log`);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      const msg = String(o.msg ?? '');
      const at = typeof o.time === 'number' ? o.time : Date.parse(String(o.time));
      if (msgs.includes(msg) && at >= since) out.push({ at, host: h.name, msg, o });
    }
  }
  return out.sort((a, b) => a.at - b.at);
}
