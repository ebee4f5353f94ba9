/**
 * Probes of `suicide-peer-check.test.ts`: keepaliled's suicide-watch lines, the suicide marker, what
 * a host's BMC and power switch were asked to do (`chassis.log`, `power.log`), and a guest's console
 * heartbeats. Each probe reads once; the test waits with `waitUntil` around them.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, ClusterHost } from './harness/index.js';
import { suicideMarker } from './pvc-node.js';
import { serviceLog } from './scenario-probes.js';

/** One `suicide-watch` event of a host's keepaliled (a state change of its suicide watch). */
export interface WatchChange {
  host: string;
  at: number;
  from: string;
  to: string;
  reason: string;
}

/** The suicide-watch state changes `host`'s keepaliled logged at or after `since` (epoch ms). */
export function watchChanges(host: ClusterHost, since: number): WatchChange[] {
  return serviceLog(host, 'keepaliled', since)
    .filter((l) => l.msg === 'suicide-watch')
    .map((l) => ({ host: host.name, at: logTime(l), from: String(l.from), to: String(l.to), reason: String(l.reason) }));
}

/** The time of a JSON log line (pino: ISO string or epoch ms). */
export function logTime(l: Record<string, unknown>): number {
  return typeof l.time === 'number' ? l.time : Date.parse(String(l.time));
}

/** keepaliled's lines of `host` with message `msg` at or after `since`. */
export function logLines(host: ClusterHost, msg: string, since: number): Record<string, unknown>[] {
  return serviceLog(host, 'keepaliled', since).filter((l) => l.msg === msg);
}

/** The epoch ms of every line the suicide command appended to the host's marker (none: it never ran). */
export function suicideMarks(host: ClusterHost): number[] {
  const f = suicideMarker(host);
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => Number(l.split(' ')[0]));
}

/** Current size of a file (0 when absent): what is appended after it is new. */
export function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** The text appended to `file` after byte `offset`. */
export function textAfter(file: string, offset: number): string {
  const size = sizeOf(file);
  if (size <= offset) return '';
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The host's BMC request log and power switch log (the harness's `chassis.log`, `power.log`). */
export function powerLogs(host: ClusterHost): { chassis: string; power: string } {
  return { chassis: join(host.dirs.log, 'chassis.log'), power: join(host.dirs.log, 'power.log') };
}

/** A `set` request the BMC got: `set reset 1` (a reset), `set power 0` (off), `set power 1` (on). */
export interface BmcRequest {
  at: number;
  request: string;
}

/** The `set` requests in `chassis.log` text (lines `YYYY-MM-DD HH:MM:SS.mmm mc=0x20 set …`, local time). */
export function bmcSets(text: string): BmcRequest[] {
  return [...text.matchAll(/^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) mc=\S+ (set .+)$/gm)].map((m) => ({ at: new Date(m[1]!.replace(' ', 'T')).getTime(), request: m[2]! }));
}

/** The heartbeat counters a guest printed to its console after byte `offset`, in order. */
export function ticksAfter(cluster: Cluster, vm: string, offset: number): number[] {
  return [...textAfter(cluster.guest.consoleLog(vm), offset).matchAll(new RegExp(`pvc-guest ${vm} tick (\\d+)`, 'g'))].map((m) => Number(m[1]));
}

/** How many times a guest booted (its `pvc-guest <name> up` line) after byte `offset` of its console log. */
export function bootsAfter(cluster: Cluster, vm: string, offset: number): number {
  return textAfter(cluster.guest.consoleLog(vm), offset).split('\n').filter((l) => l.trim() === `pvc-guest ${vm} up`).length;
}
