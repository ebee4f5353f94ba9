import assert from 'node:assert/strict';
import { VirtualClock } from '@pvc/runtime';
import { baseKeys, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { CliError } from '../errors.js';

/** Unit-test support: an initialised tree on the in-memory fake Zookeeper. */
export async function fakeCluster(): Promise<{ zk: ZkClient; dump: (root?: string) => Record<string, string> }> {
  const server = new FakeZkServer({ clock: new VirtualClock(1_700_000_000_000) });
  const zk = await server.connect();
  for (const k of baseKeys()) await zk.ensurePath(k);
  return { zk, dump: (root = '/networks') => server.dump(root) };
}

/** Asserts that `p` fails with a CliError of exit status `exit` whose message matches `re`. */
export async function fails(p: Promise<unknown>, exit: number, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof CliError, String(err));
    assert.equal(err.exitCode, exit, err.message);
    assert.match(err.message, re);
    return true;
  });
}
