import { describeError } from '@pvc/runtime';
import { clusterKeys, connectZk, connectionString, readKeyIfExists, SCHEMA_VERSION, type ZkClient } from '@pvc/zk';
import { resolveConnection, type Connection, type ConnectionFlags } from './connection.js';
import { noCluster } from './errors.js';
import type { CliIo } from './io.js';
import { Output } from './output.js';

/** Global options every command sees. */
export interface GlobalFlags extends ConnectionFlags {
  /** `--no-color` sets false; absent = decide from the terminal. */
  color?: boolean;
  /** Seconds to wait for Zookeeper before giving up (default 10). */
  zkTimeout?: string;
}

/** A connected cluster, as a command gets it. */
export interface Cluster {
  zk: ZkClient;
  connection: Connection;
}

/**
 * What a command runs with: the I/O, the output writer and, on demand, a Zookeeper session that
 * is opened once and closed when the command ends.
 */
export class CliContext {
  private flags: GlobalFlags = {};
  private session: Promise<Cluster> | undefined;
  private out: Output | undefined;

  constructor(readonly io: CliIo) {}

  /** Called by the program before each action with the parsed global options. */
  setFlags(flags: GlobalFlags): void {
    this.flags = flags;
    this.out = undefined;
  }

  get output(): Output {
    this.out ??= new Output(this.io, this.flags.color === false ? false : undefined);
    return this.out;
  }

  /** The connection, without connecting (for `connection` commands and messages). */
  connection(): Promise<Connection> {
    return resolveConnection(this.flags, this.io.env);
  }

  /**
   * Connects (once) and checks that the tree is a PVC cluster of our schema version, unless
   * `uninitialisedOk` (for `cluster init` and `restore`).
   */
  async cluster(opts: { uninitialisedOk?: boolean } = {}): Promise<Cluster> {
    this.session ??= this.connect();
    const c = await this.session;
    if (!opts.uninitialisedOk) await checkSchema(c);
    return c;
  }

  private async connect(): Promise<Cluster> {
    const connection = await this.connection();
    const timeoutS = Number(this.flags.zkTimeout ?? this.io.env.PVC_ZK_TIMEOUT ?? 10);
    const timeoutMs = Number.isFinite(timeoutS) && timeoutS > 0 ? timeoutS * 1000 : 10_000;
    const where = connectionString(connection.hosts, connection.port);
    try {
      const zk = await connectZk(
        { hosts: connection.hosts, port: connection.port, clock: this.io.clock, sessionTimeoutMs: 10_000, opTimeoutMs: timeoutMs, spinDelayMs: 100 },
        { timeoutMs, ...(this.io.signal ? { signal: this.io.signal } : {}) },
      );
      return { zk, connection };
    } catch (err) {
      throw noCluster(`cannot reach Zookeeper at ${where} (connection "${connection.name}"): ${describeError(err)}`, err);
    }
  }

  /** Ends the session, if one was opened. */
  async close(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    if (!s) return;
    const c = await s.catch(() => undefined);
    await c?.zk.close().catch(() => undefined);
  }
}

async function checkSchema(c: Cluster): Promise<void> {
  const version = await readKeyIfExists(c.zk, clusterKeys.schemaVersion);
  if (version === undefined) {
    throw noCluster(`Zookeeper at ${c.connection.hosts.join(',')} holds no PVC cluster: run "pvc cluster init" first`);
  }
  if (version !== SCHEMA_VERSION) {
    throw noCluster(`the cluster's schema version is "${version}"; this pvc speaks version ${SCHEMA_VERSION}`);
  }
}
