/**
 * Spec rig of the storage request work: an initialised fake Zookeeper, a {@link FakeCeph} behind
 * `FakeExec` through the real Ceph command port, a virtual clock and a log recorder.
 *
 * @module
 */
import { createLogger, FakeExec, VirtualClock, type Logger } from '@pvc/runtime';
import { baseKeys, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { createCephCli } from '../host/ceph-cli.js';
import { FakeCeph } from './fake-ceph.js';
import type { StorageIo } from './view.js';

/** What a spec gets. */
export interface StorageRig {
  clock: VirtualClock;
  server: FakeZkServer;
  zk: ZkClient;
  exec: FakeExec;
  ceph: FakeCeph;
  io: StorageIo;
  logger: Logger;
  logs: { msg: string; [k: string]: unknown }[];
  /** The tree under `root` (default `/ceph`), key → value. */
  dump(root?: string): Record<string, string>;
  /** Ceph commands run so far, without the `--format json` the port adds. */
  commands(): string[];
}

/** Builds the rig. */
export async function storageRig(): Promise<StorageRig> {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const zk = await server.connect();
  for (const k of baseKeys()) await zk.ensurePath(k);
  const exec = new FakeExec();
  const ceph = new FakeCeph(exec);
  const logs: StorageRig['logs'] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void logs.push(JSON.parse(s) as StorageRig['logs'][number]) } });
  const io: StorageIo = { zk, ceph: createCephCli(exec), timeoutMs: 1_000, longTimeoutMs: 2_000, zkTimeoutMs: 1_000 };
  return {
    clock, server, zk, exec, ceph, io, logger, logs,
    dump: (root = '/ceph') => server.dump(root),
    commands: () => exec.lines().map((l) => l.replace(/ --format json$/, '')),
  };
}
