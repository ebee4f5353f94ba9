// A stats duty over fakes for the unit specs: FakeZkServer (with `/ceph`, one pool and one OSD
// known), FakeExec answering the Ceph commands with the one-host Ceph's real outputs, a
// VirtualClock, and a logger whose lines are kept.
import { createLogger, FakeExec, TimeoutError, VirtualClock, type ExecOptions, type ExecResult, type Logger } from '@pvc/runtime';
import { FakeZkServer } from '@pvc/zk/testing';
import type { ZkClient } from '@pvc/zk';
import { createCephCli } from '../../host/ceph-cli.js';
import { CephStatsDuty } from '../duty.js';
import * as F from './fixtures.js';

/** Keepalive interval of the rig, and the command deadline the duty gets. */
export const INTERVAL_MS = 5_000;
export const COMMAND_TIMEOUT_MS = 3_000;

/** One kept log line. */
export type LogLine = Record<string, unknown> & { msg: string; level: number };

/** The commands of a pass, each answered with the real output (later `on` calls override). */
export function cephExec(): FakeExec {
  return new FakeExec()
    .on('ceph status', { stdout: F.CEPH_STATUS })
    .on('ceph health --format json', { stdout: F.CEPH_HEALTH_OK })
    .on('ceph df', { stdout: F.CEPH_DF })
    .on('ceph df --format json', { stdout: F.CEPH_DF_JSON })
    .on('rados df --format json', { stdout: F.RADOS_DF_JSON })
    .on('ceph osd dump --format json', { stdout: F.OSD_DUMP_JSON })
    .on('ceph osd df --format json', { stdout: F.OSD_DF_JSON })
    .on('ceph osd status', { stdout: F.OSD_STATUS })
    .on('ceph osd metadata --format json', { stdout: F.OSD_METADATA_JSON });
}

/**
 * A responder that never answers: like a Ceph tool whose mon does not reply, it ends only when its
 * deadline passes on `clock` (TimeoutError, as the real Exec) or its signal aborts.
 */
export function hang(clock: VirtualClock): (call: { command: string; args: string[] }, opts: ExecOptions) => Promise<ExecResult> {
  return (call, opts) =>
    new Promise<ExecResult>((_resolve, reject) => {
      const line = [call.command, ...call.args].join(' ');
      clock.sleep(opts.timeoutMs ?? 60_000, opts.signal).then(
        () => reject(new TimeoutError(line, opts.timeoutMs ?? 60_000)),
        (err: unknown) => reject(err),
      );
    });
}

/** The rig. */
export interface StatsRig {
  clock: VirtualClock;
  server: FakeZkServer;
  /** The duty's session. */
  zk: ZkClient;
  /** Another session, for setting up and reading. */
  admin: ZkClient;
  exec: FakeExec;
  duty: CephStatsDuty;
  logger: Logger;
  lines: LogLine[];
  /** Log lines whose message matches. */
  logs(re: RegExp): LogLine[];
  close(): Promise<void>;
}

/** Builds the rig: `/ceph` with pool `vms` and OSD 0 known, nothing written yet. */
export async function statsRig(exec: FakeExec = cephExec()): Promise<StatsRig> {
  const clock = new VirtualClock(1_764_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  const zk = await server.connect();
  for (const p of ['/ceph/pools/vms', '/ceph/osds/0', '/ceph/volumes', '/ceph/snapshots']) await admin.ensurePath(p);
  const lines: LogLine[] = [];
  const logger = createLogger({ service: 'cephd', debug: true, dates: false, destination: { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) } });
  const duty = new CephStatsDuty({
    zk, cli: createCephCli(exec), clock, logger, node: 'hv1', intervalMs: INTERVAL_MS, commandTimeoutMs: COMMAND_TIMEOUT_MS, zkTimeoutMs: 1_000,
  });
  return {
    clock, server, zk, admin, exec, duty, logger, lines,
    logs: (re) => lines.filter((l) => re.test(l.msg)),
    close: async () => {
      await duty.stop();
      await zk.close();
      await admin.close();
    },
  };
}
