import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import yaml from 'js-yaml';
import { z } from 'zod';
import { loadConfig, DEFAULT_CONFIG_PATH, CONFIG_ENV_VAR } from '@pvc/config';
import { describeError } from '@pvc/runtime';
import { DEFAULT_ZK_PORT } from '@pvc/zk';
import { noCluster, usage } from './errors.js';

/**
 * Which cluster a command talks to. The original's `pvc connection` kept API addresses in
 * `pvc.json`; ours keeps Zookeeper addresses (the client talks to ZK directly) in a YAML file of
 * named clusters: `$PVC_CLIENT_CONFIG`, else `$XDG_CONFIG_HOME/pvc/clusters.yaml`, else
 * `~/.config/pvc/clusters.yaml`. `local` is the node's own `pvcnoded.yaml` (its coordinators).
 */

const HOST = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?$/;

const clusterSchema = z.object({
  hosts: z.array(z.string().regex(HOST, 'a host name or address, optionally :port')).min(1),
  port: z.number().int().min(1).max(65535).optional(),
  description: z.string().optional(),
});
const storeSchema = z.object({
  default: z.string().optional(),
  clusters: z.record(z.string(), clusterSchema).default({}),
});

/** One named cluster of the store. */
export type ClusterEntry = z.infer<typeof clusterSchema>;
/** The whole store. */
export type ConnectionStore = z.infer<typeof storeSchema>;

/** A resolved connection: where to reach Zookeeper and how it was chosen. */
export interface Connection {
  name: string;
  hosts: string[];
  port: number;
  /** `--zk`, `PVC_ZK`, `-c`, `PVC_CONNECTION`, `default`, `local`. */
  source: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The store's path for this environment. */
export function storePath(env: Env): string {
  if (env.PVC_CLIENT_CONFIG) return env.PVC_CLIENT_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || '/root', '.config');
  return join(base, 'pvc', 'clusters.yaml');
}

/** Reads the store; a missing file is an empty store, a malformed one an error naming the problem. */
export async function readStore(env: Env): Promise<ConnectionStore> {
  const path = storePath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { clusters: {} };
    throw usage(`cannot read ${path}: ${describeError(err)}`);
  }
  let doc: unknown;
  try {
    doc = yaml.load(text) ?? {};
  } catch (err) {
    throw usage(`${path} is not valid YAML: ${describeError(err).split('\n')[0] ?? ''}`);
  }
  const parsed = storeSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw usage(`${path}: ${issue?.path.join('.') || '(document)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Writes the store atomically, readable by its owner only (it names the cluster's coordinators). */
export async function writeStore(env: Env, store: ConnectionStore): Promise<void> {
  const path = storePath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, yaml.dump(store, { sortKeys: true }), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

/** Parses a `--zk` / `PVC_ZK` / `--hosts` list: `host[:port]` entries separated by commas. */
export function parseHosts(raw: string, what: string): string[] {
  const hosts = raw.split(',').map((h) => h.trim()).filter((h) => h !== '');
  if (hosts.length === 0) throw usage(`${what}: expected host[:port][,host[:port]...], got "${raw}"`);
  for (const h of hosts) {
    const m = HOST.exec(h);
    const port = m?.[2] ? Number(m[2].slice(1)) : 1;
    if (!m || port < 1 || port > 65535) throw usage(`${what}: "${h}" is not a host name or address with an optional :port`);
  }
  return hosts;
}

/** What the global options say. */
export interface ConnectionFlags {
  connection?: string;
  zk?: string;
}

/**
 * Chooses the cluster: `--zk`, then `-c <name>`, then `PVC_ZK`, then `PVC_CONNECTION`, then the
 * store's default, then `local` when this machine has a node configuration.
 */
export async function resolveConnection(flags: ConnectionFlags, env: Env): Promise<Connection> {
  if (flags.zk) return { name: 'command line', hosts: parseHosts(flags.zk, '--zk'), port: DEFAULT_ZK_PORT, source: '--zk' };
  if (flags.connection) return named(flags.connection, env, '-c');
  if (env.PVC_ZK) return { name: 'environment', hosts: parseHosts(env.PVC_ZK, 'PVC_ZK'), port: DEFAULT_ZK_PORT, source: 'PVC_ZK' };
  if (env.PVC_CONNECTION) return named(env.PVC_CONNECTION, env, 'PVC_CONNECTION');
  const store = await readStore(env);
  if (store.default) return named(store.default, env, 'default');
  const local = await localConnection(env).catch(() => undefined);
  if (local) return local;
  throw noCluster(
    'no cluster given: use --zk host[:port],..., -c <name> (see "pvc connection add"), or set PVC_ZK',
  );
}

async function named(name: string, env: Env, source: string): Promise<Connection> {
  if (name === 'local') return localConnection(env);
  const store = await readStore(env);
  const entry = store.clusters[name];
  if (!entry) {
    const known = Object.keys(store.clusters).sort();
    throw noCluster(`no connection named "${name}" in ${storePath(env)}${known.length ? ` (known: ${known.join(', ')}, local)` : ''}`);
  }
  return { name, hosts: entry.hosts, port: entry.port ?? DEFAULT_ZK_PORT, source };
}

/** The node's own configuration (`PVCD_CONFIG_FILE` or /etc/pvc/pvcnoded.yaml): its coordinators. */
export async function localConnection(env: Env): Promise<Connection> {
  const path = env[CONFIG_ENV_VAR] || DEFAULT_CONFIG_PATH;
  try {
    const config = await loadConfig({ path });
    return { name: 'local', hosts: config.zkConnectString.split(','), port: DEFAULT_ZK_PORT, source: 'local' };
  } catch (err) {
    throw noCluster(`connection "local": cannot use ${path}: ${describeError(err).split('\n')[0] ?? ''}`, err);
  }
}
