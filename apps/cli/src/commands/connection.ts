import type { Command } from 'commander';
import { describeError } from '@pvc/runtime';
import { clusterKeys, connectZk, connectionString, DEFAULT_ZK_PORT, paths, readKeyIfExists } from '@pvc/zk';
import { localConnection, parseHosts, readStore, storePath, writeStore, type Connection, type ConnectionStore } from '../connection.js';
import type { CliContext } from '../context.js';
import { refused, usage } from '../errors.js';
import { formatOf, formatOption } from './common.js';

/** `pvc connection add|remove|list|detail|default`: the store of named clusters. */
export function registerConnection(program: Command, ctx: CliContext): void {
  const group = program.command('connection').description('named clusters this client can talk to');

  group
    .command('add <name>')
    .description('add or replace a named cluster')
    .requiredOption('--hosts <hosts>', 'its Zookeeper servers: host[:port],...')
    .option('--port <port>', 'port of hosts given without one', String(DEFAULT_ZK_PORT))
    .option('-d, --description <text>', 'a description')
    .option('--default', 'use it when no connection is given')
    .action(async (name: string, o: { hosts: string; port: string; description?: string; default?: boolean }) => {
      if (name === 'local' || !/^[A-Za-z0-9_.-]+$/.test(name)) throw usage(`connection name "${name}": expected letters, digits, . _ - (and not "local")`);
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw usage(`--port: "${o.port}" is not a port number`);
      const hosts = parseHosts(o.hosts, '--hosts');
      const store = await readStore(ctx.io.env);
      store.clusters[name] = { hosts, port, ...(o.description ? { description: o.description } : {}) };
      if (o.default) store.default = name;
      await writeStore(ctx.io.env, store);
      ctx.output.line(`Added connection "${name}" (${connectionString(hosts, port)}) to ${storePath(ctx.io.env)}`);
    });

  group
    .command('remove <name>')
    .description('remove a named cluster')
    .action(async (name: string) => {
      const store = await storeWith(ctx, name);
      delete store.clusters[name];
      if (store.default === name) delete store.default;
      await writeStore(ctx.io.env, store);
      ctx.output.line(`Removed connection "${name}"`);
    });

  group
    .command('default <name>')
    .description('use this named cluster when none is given')
    .action(async (name: string) => {
      const store = await storeWith(ctx, name);
      store.default = name;
      await writeStore(ctx.io.env, store);
      ctx.output.line(`Default connection: "${name}"`);
    });

  group
    .command('list')
    .description('list the named clusters')
    .addOption(formatOption())
    .action(async (o: { format: string }) => {
      const rows = await allConnections(ctx);
      if (formatOf(o) === 'json') return ctx.output.json(rows);
      if (rows.length === 0) return ctx.output.note(`No connections in ${storePath(ctx.io.env)}: add one with "pvc connection add <name> --hosts ..."`);
      ctx.output.table(rows, [
        { header: 'Name', value: (r) => r.name + (r.default ? ' *' : '') },
        { header: 'Zookeeper', value: (r) => connectionString(r.hosts, r.port) },
        { header: 'Description', value: (r) => r.description ?? '' },
      ]);
    });

  group
    .command('detail')
    .description('reach every named cluster and show its state')
    .addOption(formatOption())
    .action(async (o: { format: string }) => {
      const rows = await Promise.all((await allConnections(ctx)).map(async (c) => ({ ...c, ...(await probe(ctx, c)) })));
      if (formatOf(o) === 'json') return ctx.output.json(rows);
      ctx.output.table(rows, [
        { header: 'Name', value: (r) => r.name + (r.default ? ' *' : '') },
        { header: 'Zookeeper', value: (r) => connectionString(r.hosts, r.port) },
        { header: 'Reachable', value: (r) => (r.reachable ? 'yes' : 'no'), style: (r) => (r.reachable ? 'green' : 'red') },
        { header: 'Schema', value: (r) => r.schema ?? '-' },
        { header: 'Nodes', value: (r) => r.nodes ?? '-' },
        { header: 'VMs', value: (r) => r.vms ?? '-' },
        { header: 'Error', value: (r) => r.error ?? '' },
      ]);
    });
}

/** The store, which must hold a connection named `name`. */
async function storeWith(ctx: CliContext, name: string): Promise<ConnectionStore> {
  const store = await readStore(ctx.io.env);
  if (!store.clusters[name]) throw refused(`no connection named "${name}"`);
  return store;
}

interface Listed extends Connection {
  description?: string;
  default: boolean;
}

async function allConnections(ctx: CliContext): Promise<Listed[]> {
  const store = await readStore(ctx.io.env);
  const rows: Listed[] = Object.entries(store.clusters)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, c]) => ({ name, hosts: c.hosts, port: c.port ?? DEFAULT_ZK_PORT, source: 'store', default: store.default === name, ...(c.description ? { description: c.description } : {}) }));
  const local = await localConnection(ctx.io.env).catch(() => undefined);
  if (local) rows.push({ ...local, default: false, description: 'this node (pvcnoded.yaml)' });
  return rows;
}

async function probe(ctx: CliContext, c: Connection): Promise<{ reachable: boolean; schema?: string; nodes?: number; vms?: number; error?: string }> {
  try {
    const zk = await connectZk({ hosts: c.hosts, port: c.port, clock: ctx.io.clock, spinDelayMs: 100 }, { timeoutMs: 3000 });
    try {
      const schema = await readKeyIfExists(zk, clusterKeys.schemaVersion);
      if (schema === undefined) return { reachable: true, error: 'no PVC cluster (pvc cluster init)' };
      const [nodes, vms] = await Promise.all([zk.children(paths.nodes), zk.children(paths.domains)]);
      return { reachable: true, schema: String(schema), nodes: nodes.length, vms: vms.length };
    } finally {
      await zk.close();
    }
  } catch (err) {
    return { reachable: false, error: describeError(err) };
  }
}
