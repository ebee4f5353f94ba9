// The built `pvc` (node apps/cli/dist/main.js) as a user runs it: a real process, real exit
// statuses, real pipes. Needs the build (`npx tsc -b apps/cli`; scripts/test.sh builds first).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Command } from 'commander';
import { PVC_VERSION, realClock } from '@pvc/runtime';
import { paths } from '@pvc/zk';
import { buildProgram } from '../../../apps/cli/src/cli.js';
import { CliContext } from '../../../apps/cli/src/context.js';
import { freePort } from '../../support/ports.js';
import { CliRig } from './support.js';

const MAIN = new URL('../../../apps/cli/dist/main.js', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built binary with exactly `env` (plus PATH), stdout and stderr piped. */
function pvc(args: readonly string[], env: Record<string, string>, timeoutMs = 20_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every visible command path (the implicit `help` command left out). */
function commandPaths(cmd: Command, prefix: string[] = []): { path: string[]; cmd: Command }[] {
  return cmd.createHelp().visibleCommands(cmd)
    .filter((c) => c.name() !== 'help')
    .flatMap((c) => [{ path: [...prefix, c.name()], cmd: c }, ...commandPaths(c, [...prefix, c.name()])]);
}

function hasHelp(cmd: Command): boolean {
  return cmd.createHelp().visibleOptions(cmd).some((o) => o.long === '--help');
}

/** Maps `items` through `fn`, at most `width` at a time, keeping the order. */
async function inBatches<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

const ANSI = /\u001b\[/;

describe('pvc binary', () => {
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    assert.ok(existsSync(MAIN), `${MAIN} is missing: build first (npx tsc -b apps/cli)`);
    dir = await mkdtemp(join(tmpdir(), 'pvc-bin-'));
    env = { HOME: dir, PVC_CLIENT_CONFIG: join(dir, 'cfg', 'clusters.yaml'), PVCD_CONFIG_FILE: join(dir, 'missing.yaml'), TERM: 'xterm-256color' };
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('--version prints the version and exits 0', async () => {
    const r = await pvc(['--version'], env);
    assert.deepEqual(r, { code: 0, stdout: `pvc ${PVC_VERSION}\n`, stderr: '' });
    assert.equal(PVC_VERSION, '0.1.0');
  });

  it('a reader that closes the pipe early (pvc … | head) ends pvc quietly, without an EPIPE stack', async () => {
    const r = await new Promise<Run>((resolve, reject) => {
      const child = spawn(process.execPath, [MAIN, 'vm', '-h'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
      child.stdout.destroy(); // the reader is gone before pvc writes anything
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout: '', stderr }));
    });
    assert.doesNotMatch(r.stderr, /EPIPE|Unhandled|at .*\.js:\d+/, r.stderr);
    assert.equal(r.code, 0, r.stderr);
  });

  it('-h works on every level of the tree and prints its usage', async () => {
    const program = buildProgram(new CliContext({ stdout: { write: () => true }, stderr: { write: () => true }, env: {}, clock: realClock, readFile: () => Promise.resolve('') }));
    const all = commandPaths(program);
    assert.ok(all.length >= 15, `only ${all.length} commands`);
    const top = await pvc(['-h'], env);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /^Usage: pvc \[options\] \[command\]/);
    assert.doesNotMatch(top.stdout, /__complete/);
    const runs = await inBatches(all, 4, ({ path }) => pvc([...path, '-h'], env));
    for (const [i, { path, cmd }] of all.entries()) {
      const r = runs[i] ?? { code: null, stdout: '', stderr: 'not run' };
      assert.ok(hasHelp(cmd), `pvc ${path.join(' ')} has no -h`);
      assert.equal(r.code, 0, `pvc ${path.join(' ')} -h: ${r.stderr}`);
      assert.ok(r.stdout.startsWith(`Usage: pvc ${path.join(' ')}`), `pvc ${path.join(' ')} -h printed: ${r.stdout.slice(0, 200)}`);
      assert.equal(r.stderr, '');
    }
    console.log(`# -h checked on ${all.length + 1} commands`);
  });

  it('an unknown command or option exits 2 naming it on a pvc: line', async () => {
    const cmd = await pvc(['bogus'], env);
    assert.equal(cmd.code, 2);
    assert.equal(cmd.stderr, "pvc: unknown command 'bogus' (add -h for help)\n");
    const opt = await pvc(['connection', 'list', '--bogus'], env);
    assert.equal(opt.code, 2);
    assert.equal(opt.stderr, "pvc: unknown option '--bogus' (add -h for help)\n");
    for (const r of [cmd, opt]) assert.equal(r.stdout, '');
  });

  it('exits 3 with one line naming the address when no Zookeeper answers', async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await pvc(['--zk-timeout', '1', 'cluster', 'init'], { ...env, PVC_ZK: `127.0.0.1:${port}` });
    assert.equal(r.code, 3);
    assert.match(r.stderr, new RegExp(`^pvc: cannot reach Zookeeper at 127\\.0\\.0\\.1:${port} \\(connection "environment"\\): .*\\n$`));
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  });

  it('exits 3 saying how to give a cluster when none is configured', async () => {
    const r = await pvc(['cluster', 'init'], env);
    assert.equal(r.code, 3);
    assert.equal(r.stderr, 'pvc: no cluster given: use --zk host[:port],..., -c <name> (see "pvc connection add"), or set PVC_ZK\n');
    assert.equal(r.stdout, '');
  });

  it('storage benchmark, storage osd changes and network sriov commands exit 1 saying they are not available yet', async () => {
    const net = await pvc(['network', 'sriov', 'vf'], env);
    assert.equal(net.code, 1);
    assert.match(net.stderr, /^pvc: sriov vf: SR-IOV is not available yet[^\n]*\n$/);
    const bench = await pvc(['storage', 'benchmark', 'run'], env);
    assert.equal(bench.code, 1);
    assert.match(bench.stderr, /^pvc: benchmark run: storage benchmarks are not available yet\n$/);
    const osd = await pvc(['storage', 'osd', 'add', 'hv1', '/dev/sdb'], env);
    assert.equal(osd.code, 1);
    assert.match(osd.stderr, /^pvc: storage osd add: not available yet[^\n]*\n$/);
  });

  it('storage removals without --yes exit 2 before reaching any cluster, naming the flag', async () => {
    const r = await pvc(['storage', 'pool', 'remove', 'vms'], env);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'pvc: pool remove deletes pool "vms" with all its volumes and snapshots: add --yes to confirm\n');
    // `pvc storage snapshot` is `pvc storage volume snapshot` one level up: the same guard.
    for (const args of [['storage', 'volume', 'snapshot', 'remove', 'vms', 'a', 'b'], ['storage', 'snapshot', 'remove', 'vms', 'a', 'b']]) {
      const s = await pvc(args, env);
      assert.equal(s.code, 2, args.join(' '));
      assert.equal(s.stderr, 'pvc: snapshot remove deletes snapshot "vms/a@b": add --yes to confirm\n');
    }
  });
});

describe('pvc binary: connections', () => {
  let rig: CliRig;
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    assert.ok(existsSync(MAIN), `${MAIN} is missing: build first (npx tsc -b apps/cli)`);
    rig = await CliRig.start();
    dir = await mkdtemp(join(tmpdir(), 'pvc-bin-'));
    env = { HOME: dir, PVC_CLIENT_CONFIG: join(dir, 'conf', 'clusters.yaml'), PVCD_CONFIG_FILE: join(dir, 'missing.yaml'), TERM: 'xterm-256color' };
  });
  after(async () => {
    await rig.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const list = async (): Promise<{ name: string; default: boolean; hosts: string[] }[]> => {
    const r = await pvc(['connection', 'list', '--format', 'json'], env);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { name: string; default: boolean; hosts: string[] }[];
  };

  it('add, list, default and remove round-trip through a private store file', async () => {
    const add = await pvc(['connection', 'add', 'lab', '--hosts', rig.server.hostPort, '-d', 'the lab', '--default'], env);
    assert.equal(add.code, 0, add.stderr);
    assert.equal(add.stdout, `Added connection "lab" (${rig.server.hostPort}) to ${env.PVC_CLIENT_CONFIG}\n`);
    assert.equal((await stat(env.PVC_CLIENT_CONFIG ?? '')).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, 'conf'))).mode & 0o777, 0o700);
    assert.equal((await pvc(['connection', 'add', 'far', '--hosts', 'h1,h2:2182', '--port', '2191'], env)).code, 0);
    assert.deepEqual((await list()).map((c) => [c.name, c.default, c.hosts]), [['far', false, ['h1', 'h2:2182']], ['lab', true, [rig.server.hostPort]]]);
    assert.equal((await pvc(['connection', 'default', 'far'], env)).stdout, 'Default connection: "far"\n');
    assert.deepEqual((await list()).map((c) => [c.name, c.default]), [['far', true], ['lab', false]]);
    const table = await pvc(['connection', 'list'], env);
    assert.match(table.stdout, /^Name +Zookeeper +Description/);
    assert.match(table.stdout, /far \* +h1:2191,h2:2182/);
    assert.doesNotMatch(table.stdout, ANSI, 'piped output has no colour');
    assert.equal((await pvc(['connection', 'remove', 'far'], env)).stdout, 'Removed connection "far"\n');
    assert.deepEqual((await list()).map((c) => [c.name, c.default]), [['lab', false]]);
    const again = await pvc(['connection', 'remove', 'far'], env);
    assert.deepEqual([again.code, again.stderr], [1, 'pvc: no connection named "far"\n']);
    assert.equal((await stat(env.PVC_CLIENT_CONFIG ?? '')).mode & 0o777, 0o600);
  });

  it('-c <name> reaches the cluster the store names', async () => {
    for (const child of await rig.zk.children('/')) if (child !== 'zookeeper') await rig.zk.delete(`/${child}`);
    assert.equal((await pvc(['connection', 'add', 'lab', '--hosts', rig.server.hostPort], env)).code, 0);
    const r = await pvc(['-c', 'lab', 'cluster', 'init'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Initialised a PVC cluster \(schema version 15/);
    assert.doesNotMatch(r.stdout, ANSI);
    assert.equal(await rig.zk.read(paths.schema.version), '15');
    assert.equal(await rig.zk.read(paths.config.maintenance), 'false');
    const unknown = await pvc(['-c', 'nowhere', 'cluster', 'init'], env);
    assert.equal(unknown.code, 3);
    assert.match(unknown.stderr, /^pvc: no connection named "nowhere" in .*clusters\.yaml \(known: lab, local\)\n$/);
  });

  it('a malformed store is a usage error naming the file, and is left as it was', async () => {
    const bad = join(dir, 'bad', 'clusters.yaml');
    await mkdir(join(dir, 'bad'));
    await writeFile(bad, 'clusters: [unclosed\n');
    const badEnv = { ...env, PVC_CLIENT_CONFIG: bad };
    const original = await readFile(bad, 'utf8');
    for (const args of [['connection', 'list'], ['connection', 'add', 'x', '--hosts', 'h1'], ['-c', 'lab', 'cluster', 'init']]) {
      const r = await pvc(args, badEnv);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^pvc: ${bad.replace(/[.]/g, '\\.')} is not valid YAML: [^\\n]*\\n$`));
    }
    assert.equal(await readFile(bad, 'utf8'), original, 'the malformed store is not overwritten');
    await writeFile(bad, 'clusters:\n  lab:\n    hosts: "not a list"\n');
    const r = await pvc(['connection', 'list'], badEnv);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^pvc: .*bad\/clusters\.yaml: clusters\.lab\.hosts: [^\n]+\n$/);
  });
});
