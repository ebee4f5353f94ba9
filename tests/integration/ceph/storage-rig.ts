// Rig of the `pvc storage` integration test (root): the one-host Ceph with a mgr (`ceph df`
// figures), a real ZooKeeper in this namespace listening on every address, a veth link from this
// namespace into the Ceph host's (10.253.<n>.1 here, .2 there) with the name `pvczk` for this end
// inside it (/etc/netns/<ns>/hosts, which `ip netns exec` mounts over /etc/hosts), the built cephd
// running in the Ceph namespace as hv1 with storage enabled and made primary over its socket, and
// `pvc` run in-process (runCli) against the ZooKeeper. Everything is torn down by `destroy()`.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PRIMARY_ROLE, rpcClient } from '@pvc/rpc';
import { realClock } from '@pvc/runtime';
import { baseKeys, connectZk, paths, SCHEMA_VERSION, type RealZkClient } from '@pvc/zk';
import { runCli } from '../../../apps/cli/src/cli.js';
import type { CliIo } from '../../../apps/cli/src/io.js';
import { ZkTestServer } from '../../support/zk-server.js';
import { startService, type ServiceProcess } from '../services/service-process.js';
import { CephHost } from './ceph-host.js';
import { run } from './run.js';

/** What one `pvc` run did. */
export interface PvcRun {
  code: number;
  stdout: string;
  stderr: string;
}

const TAG = process.pid % 250;
const ROOT_LINK = `pvczk${process.pid % 100_000}`;
const ROOT_IP = `10.253.${TAG}.1`;

async function ip(args: string[]): Promise<void> {
  const r = await run('ip', args, { timeoutMs: 10_000 });
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** The rig; see the file comment. */
export class StorageRig {
  private constructor(
    readonly ceph: CephHost,
    readonly zkServer: ZkTestServer,
    readonly zk: RealZkClient,
    readonly cephd: ServiceProcess,
  ) {}

  static async start(): Promise<StorageRig> {
    const ceph = await CephHost.start({ withMgr: true });
    const parts: { zkServer?: ZkTestServer; zk?: RealZkClient; cephd?: ServiceProcess } = {};
    try {
      await linkNamespace(ceph.hostNs);
      parts.zkServer = await ZkTestServer.start({ clientPortAddress: '0.0.0.0' });
      parts.zk = await connectZk({ hosts: ['127.0.0.1'], port: parts.zkServer.port, clock: realClock });
      for (const k of baseKeys()) await parts.zk.ensurePath(k);
      await parts.zk.set(paths.schema.version, String(SCHEMA_VERSION));
      parts.cephd = await startService('cephd', [
        ['pvc.functions.enable_storage', true],
        ['pvc.cluster.coordinators', ['pvczk']],
        ['pvc.database', { zookeeper: { port: parts.zkServer.port } }],
      ], ceph.env, ['ip', 'netns', 'exec', ceph.hostNs]);
      const role = rpcClient(parts.cephd.target, PRIMARY_ROLE);
      try {
        await role.setPrimary({ primary: true, reason: 'test' }, { deadlineMs: 10_000 });
      } finally {
        role.close();
      }
      return new StorageRig(ceph, parts.zkServer, parts.zk, parts.cephd);
    } catch (err) {
      await teardown(ceph, parts);
      throw err;
    }
  }

  /** Runs `pvc <args>` in-process against the rig's ZooKeeper. */
  async pvc(args: readonly string[]): Promise<PvcRun> {
    let stdout = '';
    let stderr = '';
    const io: CliIo = {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      env: { PVC_ZK: `127.0.0.1:${this.zkServer.port}`, USER: 'test', HOME: this.zkServer.dir },
      clock: realClock,
      readFile: (p) => readFile(p, 'utf8'),
    };
    const code = await runCli(args, io);
    return { code, stdout, stderr };
  }

  /** `pvc <args>` that must succeed; returns stdout. */
  async mustPvc(args: readonly string[]): Promise<string> {
    const r = await this.pvc(args);
    if (r.code !== 0) throw new Error(`pvc ${args.join(' ')} exited ${r.code}: ${r.stderr}\ncephd:\n${this.cephd.output().split('\n').slice(-10).join('\n')}`);
    return r.stdout;
  }

  /** JSON of a Ceph command run in the Ceph host. */
  async cephJson(cmd: 'ceph' | 'rbd', args: readonly string[]): Promise<unknown> {
    return JSON.parse(await this.ceph.mustInHost(cmd, [...args, '--format', 'json'])) as unknown;
  }

  /** The ZooKeeper tree under `root`, key → value. */
  async dump(root: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const walk = async (p: string): Promise<void> => {
      const snap = await this.zk.get(p).catch(() => undefined);
      if (!snap) return;
      out[p] = snap.data;
      for (const c of await this.zk.children(p)) await walk(`${p}/${c}`);
    };
    await walk(root);
    return out;
  }

  async destroy(): Promise<void> {
    await teardown(this.ceph, { zkServer: this.zkServer, zk: this.zk, cephd: this.cephd });
  }
}

/** The veth link and the `pvczk` name inside `ns`. */
async function linkNamespace(ns: string): Promise<void> {
  await run('ip', ['link', 'del', ROOT_LINK], { timeoutMs: 5_000 }); // a run killed before its teardown
  await ip(['link', 'add', ROOT_LINK, 'type', 'veth', 'peer', 'name', 'zk0', 'netns', ns]);
  await ip(['address', 'add', `${ROOT_IP}/30`, 'dev', ROOT_LINK]);
  await ip(['link', 'set', ROOT_LINK, 'up']);
  await ip(['-n', ns, 'address', 'add', `10.253.${TAG}.2/30`, 'dev', 'zk0']);
  await ip(['-n', ns, 'link', 'set', 'zk0', 'up']);
  mkdirSync(`/etc/netns/${ns}`, { recursive: true });
  writeFileSync(`/etc/netns/${ns}/hosts`, `127.0.0.1 localhost\n${ROOT_IP} pvczk\n`);
}

async function teardown(ceph: CephHost, parts: { zkServer?: ZkTestServer; zk?: RealZkClient; cephd?: ServiceProcess }): Promise<void> {
  const steps: [string, () => unknown][] = [
    ['cephd', () => parts.cephd?.cleanup()],
    ['ZooKeeper client', () => parts.zk?.close()],
    ['ZooKeeper server', () => parts.zkServer?.destroy()],
    ['root link', () => run('ip', ['link', 'del', ROOT_LINK], { timeoutMs: 5_000 })],
    ['netns hosts', () => rmSync(`/etc/netns/${ceph.hostNs}`, { recursive: true, force: true })],
    ['Ceph', () => ceph.destroy()],
  ];
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (err) {
      console.error(`clean-up of ${what} failed: ${(err as Error).message}`);
    }
  }
}
