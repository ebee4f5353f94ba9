// Shell completion of the built `pvc` in real bash and zsh, against a real Zookeeper: the scripts
// printed by `pvc completion bash|zsh` are sourced, and names of VMs, nodes and connections come
// from the cluster and the store. Needs the build (`npx tsc -b apps/cli`; scripts/test.sh builds first).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { newDomainObject, paths } from '@pvc/zk';
import { freePort } from '../../support/ports.js';
import { CliRig, domainXml } from './support.js';

const run = promisify(execFile);
const MAIN = new URL('../../../apps/cli/dist/main.js', import.meta.url).pathname;
const hasZsh = existsSync('/usr/bin/zsh') || existsSync('/bin/zsh');

/** `pvc` as a shell function running the build, so the scripts call it by the name the user typed. */
const PVC_FN = 'pvc() { node "$PVC_MAIN" "$@"; }';

/** Completes `line` (cursor at its end) in bash the way bash calls the function on TAB. */
async function bash(line: string, env: Record<string, string>): Promise<string[]> {
  const script = `${PVC_FN}; source <(pvc completion bash); COMP_LINE=$1; COMP_POINT=\${#COMP_LINE}; COMPREPLY=(); _pvc_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = await run('bash', ['-c', script, 'bash', line], { env: { PATH: process.env.PATH ?? '', PVC_MAIN: MAIN, ...env } });
  return r.stdout.split('\n').filter((l) => l !== '');
}

/**
 * Completes in zsh: the script is loaded as an installed `_pvc` from $fpath (autoload) or sourced,
 * `words`/`CURRENT` are set as compsys sets them, and `compadd`/`_files` print what they are given.
 */
async function zsh(words: string[], env: Record<string, string>, how: 'autoload' | 'source'): Promise<string[]> {
  const load = how === 'autoload'
    ? 'd=$(mktemp -d); pvc completion zsh > $d/_pvc; fpath=($d $fpath); autoload -Uz _pvc'
    : 'compdef() { print -r -- "compdef $*" }; source <(pvc completion zsh)';
  const script = [
    PVC_FN,
    'compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift; print -rl -- "$@" }',
    '_files() { print -r -- "(files)" }',
    load,
    'words=("$@"); CURRENT=$#',
    '_pvc',
    ...(how === 'autoload' ? ['rm -rf $d'] : []),
  ].join('\n');
  const r = await run('zsh', ['-f', '-c', script, 'zsh', ...words], { env: { PATH: process.env.PATH ?? '', PVC_MAIN: MAIN, ...env } });
  return r.stdout.split('\n').filter((l) => l !== '');
}

describe('pvc shell completion', () => {
  let rig: CliRig;
  let env: Record<string, string>;
  before(async () => {
    assert.ok(existsSync(MAIN), `${MAIN} is missing: build first (npx tsc -b apps/cli)`);
    rig = await CliRig.start();
    await rig.reset();
    await rig.addNode('hv1', { mode: 'hypervisor' });
    await rig.addNode('hv2', { mode: 'hypervisor' });
    for (const [name, uuid] of [['web1', '0de30000-0000-4000-8000-000000000001'], ['db1', '0de30000-0000-4000-8000-000000000002']] as const) {
      const vm = newDomainObject({ uuid, name, xml: domainXml(name, { uuid }), node: 'hv1' });
      await rig.zk.createObject(vm.root, vm.entries);
    }
    await rig.zk.createObject(paths.faults.fault('DEAD_NODE_HV2').root, [['', ''], ['status', 'new'], ['delta', '50']]);
    env = rig.env();
    await writeFile(env.PVC_CLIENT_CONFIG ?? '', `clusters:\n  lab:\n    hosts: ["${rig.server.hostPort}"]\n  prod:\n    hosts: [prod1]\n`, { mode: 0o600 });
  });
  after(async () => rig.destroy());

  it('bash: subcommands by prefix, from the real command tree', async () => {
    assert.deepEqual(await bash('pvc vm st', env), ['start', 'stop']);
    assert.deepEqual(await bash('pvc cl', env), ['cluster']);
    assert.deepEqual(await bash('pvc cluster fault ', env), ['list', 'ack', 'ack-all', 'delete', 'delete-all', 'help']);
    assert.deepEqual(await bash('pvc completion ', env), ['bash', 'zsh']);
    assert.ok(!(await bash('pvc ', env)).includes('__complete'), 'the hidden command is not offered');
  });

  it('bash: VM and node names from Zookeeper', async () => {
    assert.deepEqual(await bash('pvc vm start ', env), ['db1', 'web1']);
    assert.deepEqual(await bash('pvc vm start w', env), ['web1']);
    assert.deepEqual(await bash('pvc vm migrate web1 --target ', env), ['hv1', 'hv2']);
    assert.deepEqual(await bash('pvc node flush ', env), ['hv1', 'hv2']);
    assert.deepEqual(await bash('pvc vm start web1 ', env), [], 'no second VM argument');
    assert.deepEqual(await bash('pvc cluster fault ack DEAD_NODE_HV2 D', env), ['DEAD_NODE_HV2'], 'fault IDs, several allowed');
  });

  it('bash: options, choices and --opt=value', async () => {
    assert.deepEqual(await bash('pvc vm start --wa', env), ['--wait', '--wait-timeout']);
    assert.deepEqual(await bash('pvc connection list --format ', env), ['human', 'json']);
    assert.deepEqual(await bash('pvc connection list --format=j', env), ['json'], 'bash replaces only the part after "="');
  });

  it('bash: connection names from the store, and -c/--zk given on the line choose the cluster', async () => {
    assert.deepEqual(await bash('pvc connection remove ', env), ['lab', 'prod']);
    assert.deepEqual(await bash('pvc -c ', env), ['lab', 'prod']);
    const noZk = { ...env, PVC_ZK: '' };
    assert.deepEqual(await bash('pvc vm start ', noZk), [], 'no cluster configured: nothing');
    assert.deepEqual(await bash('pvc -c lab vm start ', noZk), ['db1', 'web1']);
    assert.deepEqual(await bash(`pvc --zk ${rig.server.hostPort} vm start `, noZk), ['db1', 'web1']);
  });

  it('an unreachable cluster gives no candidates, no error and exit 0, within the short timeout', async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await run('node', [MAIN, '__complete', '--', '--zk', `127.0.0.1:${port}`, 'vm', 'start', ''], { env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? '' } });
    assert.deepEqual([r.stdout, r.stderr], ['', '']);
    assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
    const bad = await run('node', [MAIN, '__complete', '--', 'connection', 'remove', ''], { env: { PATH: process.env.PATH ?? '', PVC_CLIENT_CONFIG: join(tmpdir(), 'pvc-no-such-dir', 'x.yaml') } });
    assert.deepEqual([bad.stdout, bad.stderr], ['', '']);
  });

  it('a malformed store gives no connection names and no error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pvc-compl-'));
    try {
      await writeFile(join(dir, 'clusters.yaml'), 'clusters: [\n');
      assert.deepEqual(await bash('pvc connection remove ', { ...env, PVC_CLIENT_CONFIG: join(dir, 'clusters.yaml') }), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a file argument hands over to the shell\'s file completion', async () => {
    const r = await run('node', [MAIN, '__complete', '--', 'vm', 'define', ''], { env: { PATH: process.env.PATH ?? '' } });
    assert.equal(r.stdout, ':file\n');
  });

  for (const how of ['autoload', 'source'] as const) {
    it(`zsh (${how === 'autoload' ? 'installed in $fpath' : 'sourced'}): subcommands, VM and node names, files`, async (t) => {
      if (!hasZsh) {
        t.skip('zsh is not installed (scripts/setup.sh installs it)');
        console.log('# zsh completion test skipped: zsh is not installed');
        return;
      }
      const registered = how === 'source' ? ['compdef _pvc pvc'] : [];
      assert.deepEqual(await zsh(['pvc', 'vm', 'st'], env, how), [...registered, 'start', 'stop']);
      assert.deepEqual(await zsh(['pvc', 'vm', 'start', ''], env, how), [...registered, 'db1', 'web1']);
      assert.deepEqual(await zsh(['pvc', '--zk', rig.server.hostPort, 'node', 'ready', 'h'], { ...env, PVC_ZK: '' }, how), [...registered, 'hv1', 'hv2']);
      assert.deepEqual(await zsh(['pvc', 'vm', 'list', '--format=j'], env, how), [...registered, '--format=json']);
      assert.deepEqual(await zsh(['pvc', 'vm', 'define', ''], env, how), [...registered, '(files)']);
    });
  }
});
