/**
 * A real PostgreSQL server for tests: Debian's binaries, a fresh cluster in a temp directory owned
 * by the `postgres` user, listening on 127.0.0.1 (or the addresses given) at a free port and on a
 * unix socket in its own directory (peer authentication on the socket, scram-sha-256 over TCP, as
 * Debian's defaults; clients from 127.0.0.1 and the networks given). Needs root (it runs the
 * server as `postgres`).
 */
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

/** The newest PostgreSQL installed under /usr/lib/postgresql, e.g. `/usr/lib/postgresql/15/bin`. */
export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

/** Options of {@link PgTestServer}. */
export interface PgTestServerOptions {
  /**
   * Addresses the server listens on (default `['127.0.0.1']`). Each must exist when the server
   * starts, e.g. the root namespace's address on a cluster bridge, so hosts in network namespaces
   * reach it.
   */
  listen?: readonly string[];
  /** Client networks (CIDR) allowed in over TCP with a password (scram-sha-256), besides 127.0.0.1. */
  clientNetworks?: readonly string[];
}

export class PgTestServer {
  readonly dir: string;
  readonly socketDir: string;
  port = 0;
  private readonly bin: string;
  private readonly listen: readonly string[];
  private readonly clientNetworks: readonly string[];

  constructor(opts: PgTestServerOptions = {}) {
    this.listen = opts.listen ?? ['127.0.0.1'];
    this.clientNetworks = opts.clientNetworks ?? [];
    for (const a of [...this.listen, ...this.clientNetworks]) {
      if (!/^[0-9a-fA-F:.]+(\/\d+)?$/.test(a)) throw new Error(`PgTestServer: ${JSON.stringify(a)} is not an address or network`);
    }
    const bin = postgresBinDir();
    if (!bin) throw new Error('PostgreSQL is not installed (/usr/lib/postgresql/<version>/bin): run scripts/setup.sh');
    this.bin = bin;
    this.dir = mkdtempSync(join(tmpdir(), 'pvc-pg-'));
    this.socketDir = join(this.dir, 'run');
  }

  private asPostgres(cmd: string, args: string[]): string {
    return execFileSync('runuser', ['-u', 'postgres', '--', join(this.bin, cmd), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** initdb (first time) and start; resolves once the server accepts connections. */
  async start(): Promise<void> {
    const data = join(this.dir, 'data');
    if (!existsSync(data)) {
      chmodSync(this.dir, 0o755);
      execFileSync('install', ['-d', '-o', 'postgres', '-g', 'postgres', '-m', '0700', data]);
      execFileSync('install', ['-d', '-o', 'postgres', '-g', 'postgres', '-m', '0755', this.socketDir]);
      this.asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth-local=peer', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync']);
      const hba = this.clientNetworks.map((n) => `host all all ${n.includes('/') ? n : `${n}/32`} scram-sha-256\n`).join('');
      if (hba) appendFileSync(join(data, 'pg_hba.conf'), `# PgTestServer clientNetworks\n${hba}`);
      chownSync(this.dir, 0, 0);
    }
    this.port = this.port || (await freePort());
    this.asPostgres('pg_ctl', ['-D', data, '-l', join(data, 'server.log'), '-w', '-t', '60', 'start', '-o', `-k ${this.socketDir} -p ${this.port} -c listen_addresses=${this.listen.join(',')} -c fsync=off`]);
  }

  /** Stops the server (fast shutdown); the data stays for a later start. */
  stop(): void {
    try {
      this.asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
    } catch {
      // not running
    }
  }

  /** Runs SQL as the superuser over the socket; returns psql's unaligned output. */
  sql(query: string, db = 'postgres'): string {
    return this.asPostgres('psql', ['-X', '-q', '-t', '-A', '-h', this.socketDir, '-p', String(this.port), '-d', db, '-c', query]).trim();
  }

  close(): void {
    this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
