// The Debian packages under a real systemd (issue 15 items 1-2): builds them (scripts/package.sh),
// boots systemd in a container (container.ts), installs them with dpkg, points the node at a real
// Zookeeper on the host (the container shares the host's network) and runs pvc.target — the steps
// of the README's "Installing the packages (systemd)" section. Root only; run under
// `flock /tmp/pvc-cluster.lock` beside other container or cluster tests.
//
// Node hv1 has hypervisor, networking and storage disabled (the container has no libvirtd of its
// own): the vmd restart check is that the other services keep their PIDs and that vmd comes back;
// that a killed vmd leaves running guests alone is checked against a real libvirtd by
// tests/cluster/vmd-lifecycle.test.ts (without systemd), not here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { paths, type ZkClient } from '@pvc/zk';
import { initClusterTree, supervisorConfig, zkClient } from '../integration/supervisor/support.js';
import { waitUntil } from '../support/wait.js';
import { ZkTestServer } from '../support/zk-server.js';
import { checkPrerequisites, SystemdContainer } from './container.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const DEBS = join(ROOT, 'build', 'deb');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SERVICES = ['supervisor', 'netd', 'vmd', 'cephd', 'keepaliled'] as const;
const UNITS = SERVICES.map((s) => `pvc-${s}.service`);
/** systemd's stop order (the reverse of the units' After= ordering), as documented in deploy/systemd. */
const STOP_ORDER = ['keepaliled', 'vmd', 'netd', 'cephd', 'supervisor'];

let zkServer: ZkTestServer;
let zk: ZkClient;
let c: SystemdContainer;
let dir: string;

/** The test config for node hv1 with the packaged directories (stdout to the journal). */
function config(edits: [string, unknown][] = []): string {
  const d = mkdtempSync(join(dir, 'cfg-'));
  return readFileSync(
    supervisorConfig(d, zkServer.port, 9, [
      ['pvc.system.configuration.directories.dynamic_directory', '/run/pvc'],
      ['pvc.system.configuration.directories.log_directory', '/var/log/pvc'],
      ['pvc.system.configuration.directories.console_log_directory', '/var/log/pvc/console'],
      ['pvc.system.configuration.logging.file_logging', false],
      ['pvc.system.configuration.logging.stdout_logging', true],
      ...edits,
    ]),
    'utf8',
  );
}

function writeConfig(text: string): void {
  c.ok('sh', ['-c', 'cat > /etc/pvc/pvcnoded.yaml'], text);
}

function daemonState(): Promise<string | undefined> {
  return zk.read(paths.node('hv1').daemonState).catch(() => undefined);
}

function activeState(unit: string): string {
  return c.prop(unit, 'ActiveState');
}

before(async () => {
  checkPrerequisites();
  const built = spawnSync('bash', [join(ROOT, 'scripts/package.sh'), DEBS], { encoding: 'utf8', cwd: ROOT, timeout: 300_000 });
  assert.equal(built.status, 0, `scripts/package.sh failed: ${built.stderr}${built.stdout}`);
  dir = mkdtempSync(join(tmpdir(), 'pvc-packaging-'));
  zkServer = await ZkTestServer.start();
  zk = await zkClient(zkServer.port);
  await initClusterTree(zk);
  c = await SystemdContainer.boot(`pvc-pkg-${process.pid}`, [`${DEBS}:/debs`]);
});

after(async () => {
  await c?.stop();
  await zk?.close();
  await zkServer?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('dpkg installs both packages: units, bundles, plugins, the conffile, pvc with completion', () => {
  const out = c.ok('dpkg', ['-i', `/debs/pvc-daemon-node_${VERSION}_amd64.deb`, `/debs/pvc-client-cli_${VERSION}_all.deb`]);
  assert.match(out, /Setting up pvc-daemon-node/);
  const files = c.ok('systemctl', ['list-unit-files', '--no-legend', 'pvc*']);
  for (const u of [...UNITS, 'pvc.target']) assert.match(files, new RegExp(`^${u.replace('.', '\\.')}\\s`, 'm'), files);
  assert.equal(c.ok('/usr/bin/pvc', ['--version']).trim(), `pvc ${VERSION}`);
  assert.match(c.ok('cat', ['/usr/share/bash-completion/completions/pvc']), /complete .*pvc/);
  assert.match(c.ok('dpkg-query', ['-W', '-f=${Conffiles}', 'pvc-daemon-node']), /\/etc\/pvc\/pvcnoded\.yaml/);
  const plugins = c.ok('ls', ['/usr/share/pvc/plugins']).split('\n').filter(Boolean);
  assert.deepEqual(plugins, ['disk.js', 'dpkg.js', 'ipmi.js', 'lbvt.js', 'load.js', 'nics.js', 'pvcs.js', 'zkpr.js']);
  assert.equal(c.run('test', ['-d', '/var/log/pvc']).status, 0, 'postinst creates /var/log/pvc');
});

test('systemctl enable --now pvc.target: every service active, the supervisor ready through Type=notify, the node runs', async () => {
  writeConfig(config());
  c.ok('systemctl', ['enable', '--now', 'pvc.target']);
  for (const u of UNITS) {
    await waitUntil(() => activeState(u), { what: `${u} active`, timeoutMs: 60_000, intervalMs: 250, until: (s) => s === 'active' });
  }
  await waitUntil(daemonState, { what: 'daemon state run', timeoutMs: 60_000, until: (s) => s === 'run' });
  // Type=notify: the supervisor is active only once it sent READY=1 (its status text comes with it),
  // and the other units, ordered After= it, became active after it did.
  assert.equal(c.prop('pvc-supervisor.service', 'StatusText'), 'registered');
  const readyAt = Number(c.prop('pvc-supervisor.service', 'ActiveEnterTimestampMonotonic'));
  for (const s of SERVICES.slice(1)) {
    assert.ok(Number(c.prop(`pvc-${s}.service`, 'ExecMainStartTimestampMonotonic')) >= readyAt, `${s} started before the supervisor was ready`);
  }
  for (const u of UNITS) assert.equal(c.prop(u, 'NRestarts'), '0', u);
});

test('journalctl -t pvc-<svc> shows each service its own lines', () => {
  for (const s of SERVICES) {
    const lines = c.journal(`pvc-${s}`).split('\n').filter((l) => l.startsWith('{'));
    assert.ok(lines.length > 0, `no JSON lines under pvc-${s}`);
    const names = new Set(lines.map((l) => (JSON.parse(l) as { service?: string }).service));
    assert.deepEqual([...names], [s], `pvc-${s}'s journal holds lines of ${[...names].join(', ')}`);
  }
});

test('kill -9 of vmd: systemd restarts vmd alone, the others keep their PIDs', async () => {
  const before = Object.fromEntries(UNITS.map((u) => [u, c.mainPid(u)]));
  c.ok('kill', ['-9', String(before['pvc-vmd.service'])]);
  await waitUntil(() => c.prop('pvc-vmd.service', 'NRestarts'), { what: 'vmd restarted', timeoutMs: 30_000, until: (n) => n === '1' });
  await waitUntil(() => activeState('pvc-vmd.service'), { what: 'vmd active again', timeoutMs: 30_000, until: (s) => s === 'active' });
  assert.notEqual(c.mainPid('pvc-vmd.service'), before['pvc-vmd.service']);
  for (const u of UNITS.filter((u) => u !== 'pvc-vmd.service')) {
    assert.equal(c.mainPid(u), before[u], `${u} changed PID`);
    assert.equal(c.prop(u, 'NRestarts'), '0', u);
  }
  assert.equal(await daemonState(), 'run');
});

test('a plugin that throws at load: one journal line naming the file, keepaliled and the others go on', async () => {
  const others = Object.fromEntries(UNITS.filter((u) => u !== 'pvc-keepaliled.service').map((u) => [u, c.mainPid(u)]));
  c.ok('sh', ['-c', "echo 'throw new Error(\"broken on purpose\");' > /usr/share/pvc/plugins/broken.js"]);
  c.ok('systemctl', ['restart', 'pvc-keepaliled.service']);
  const line = await waitUntil(() => c.journal('pvc-keepaliled').split('\n').find((l) => l.includes('/usr/share/pvc/plugins/broken.js')), {
    what: 'the broken plugin named in keepaliled\'s journal', timeoutMs: 60_000, intervalMs: 250,
  });
  assert.match(line ?? '', /broken on purpose/);
  assert.equal(activeState('pvc-keepaliled.service'), 'active');
  for (const [u, pid] of Object.entries(others)) assert.equal(c.mainPid(u), pid, `${u} changed PID`);
  c.ok('rm', ['/usr/share/pvc/plugins/broken.js']);
  c.ok('systemctl', ['restart', 'pvc-keepaliled.service']);
  await waitUntil(daemonState, { what: 'daemon state run', timeoutMs: 60_000, until: (s) => s === 'run' });
});

test('systemctl stop pvc.target: stopped in the documented order, daemon state stop written', async () => {
  // systemctl returns once the target is stopped; it is ordered after its units, so it stops first
  // and the units' stop jobs (in the reverse of their After= order) finish afterwards.
  c.ok('systemctl', ['stop', 'pvc.target']);
  for (const u of UNITS) {
    await waitUntil(() => activeState(u), { what: `${u} inactive`, timeoutMs: 120_000, intervalMs: 250, until: (s) => s === 'inactive' });
  }
  const stoppedAt = STOP_ORDER.map((s) => ({ s, t: Number(c.prop(`pvc-${s}.service`, 'InactiveEnterTimestampMonotonic')) }));
  const order = [...stoppedAt].sort((a, b) => a.t - b.t).map((x) => x.s);
  assert.deepEqual(order, STOP_ORDER);
  assert.equal(await daemonState(), 'stop');
});

test('a malformed config: the unit fails (not restarted), the key path in its journal', async () => {
  writeConfig(config([['pvc.system.fencing.intervals.fence_intervals', 'six']]));
  c.run('systemctl', ['start', 'pvc-supervisor.service']);
  await waitUntil(() => activeState('pvc-supervisor.service'), { what: 'supervisor failed', timeoutMs: 30_000, until: (s) => s === 'failed' });
  assert.equal(c.prop('pvc-supervisor.service', 'NRestarts'), '0', 'RestartPreventExitStatus=2: a bad config is not retried');
  assert.match(c.journal('pvc-supervisor'), /pvc\.system\.fencing\.intervals\.fence_intervals: /);
  c.ok('systemctl', ['reset-failed', 'pvc-supervisor.service']);
});

test('a missing config: the unit fails with a journal line naming the file; the others are not touched', async () => {
  writeConfig(config());
  c.ok('systemctl', ['start', 'pvc.target']);
  await waitUntil(() => UNITS.map(activeState), { what: 'all active', timeoutMs: 60_000, intervalMs: 250, until: (s) => s.every((x) => x === 'active') });
  // Type=simple units are active as soon as they are forked: wait until the node runs (the first
  // keepalive, with the figures of vmd and netd), so that every service has read its config.
  await waitUntil(daemonState, { what: 'daemon state run', timeoutMs: 60_000, until: (s) => s === 'run' });
  const pids = Object.fromEntries(UNITS.map((u) => [u, c.mainPid(u)]));
  c.ok('mv', ['/etc/pvc/pvcnoded.yaml', '/etc/pvc/pvcnoded.yaml.away']);
  c.run('systemctl', ['restart', 'pvc-netd.service']);
  await waitUntil(() => activeState('pvc-netd.service'), { what: 'netd failed', timeoutMs: 30_000, until: (s) => s === 'failed' });
  assert.match(c.journal('pvc-netd'), /\/etc\/pvc\/pvcnoded\.yaml/);
  for (const u of UNITS.filter((u) => u !== 'pvc-netd.service')) assert.equal(c.mainPid(u), pids[u], `${u} changed PID: ${c.journal(u.replace('.service', '')).split('\n').slice(-8).join('\n')}`);
  c.ok('mv', ['/etc/pvc/pvcnoded.yaml.away', '/etc/pvc/pvcnoded.yaml']);
});

test('dpkg --purge: services stopped, nothing left (units, bundles, /etc/pvc, logs)', () => {
  c.ok('dpkg', ['--purge', 'pvc-client-cli', 'pvc-daemon-node']);
  for (const u of UNITS) assert.notEqual(activeState(u), 'active', u);
  assert.equal(c.run('systemctl', ['list-unit-files', '--no-legend', 'pvc*']).stdout.trim(), '');
  for (const p of ['/usr/lib/pvc', '/usr/share/pvc', '/etc/pvc', '/var/log/pvc', '/usr/bin/pvc', '/lib/systemd/system/pvc.target']) {
    assert.notEqual(c.run('test', ['-e', p]).status, 0, `${p} is left after purge: ${c.run('ls', ['-la', p]).stdout}`);
  }
  assert.notEqual(c.run('pgrep', ['-f', '/usr/lib/pvc/']).status, 0, 'a pvc process survived the purge');
});
