// Every service's main: loads the config, serves health on its unix socket, exits cleanly on SIGTERM;
// rejects a malformed config with exit 2 naming the key, starting nothing. Runs the built dist/main.js.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTestConfig } from '@pvc/config/testing';
import { checkHealth, getStatus, socketPath, unixTarget, SERVICES } from '@pvc/rpc';
import { waitFor } from '../../cluster/harness/index.js';
import { waitUntil } from '../../support/wait.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const mainOf = (s: string): string => join(ROOT, 'apps', s, 'dist', 'main.js');

function configIn(dir: string, edits: [string, unknown][] = []): string {
  return writeTestConfig(
    dir,
    ['pvc.node', 'hv1'],
    ['pvc.cluster.coordinators', ['hv1', 'hv2', 'hv3']],
    ['pvc.system.configuration.directories.dynamic_directory', join(dir, 'run')],
    ['pvc.system.configuration.directories.log_directory', join(dir, 'log')],
    ['pvc.system.configuration.directories.console_log_directory', join(dir, 'console')],
    // No service may touch this machine's own networking (netd would load its nftables ruleset).
    ['pvc.functions.enable_networking', false],
    ...edits,
  );
}

async function waitServing(target: string, timeoutMs: number): Promise<void> {
  await waitFor(`${target} health SERVING`, timeoutMs, async () =>
    (await checkHealth(target, '', { deadlineMs: 500 })) === 'SERVING' ? true : undefined, 100);
}

describe('service mains (built dist/main.js)', () => {
  for (const service of SERVICES) {
    test(`${service}: serves health on a 0660 socket and exits 0 on SIGTERM`, async () => {
      assert.ok(existsSync(mainOf(service)), `${mainOf(service)} missing: run the build first`);
      const dir = mkdtempSync(join(tmpdir(), `pvc-${service}-`));
      try {
        // The supervisor's bring-up must not touch this host: no networking (sysctls), no hypervisor
        // check, coordinator services only probed (and nothing listens here, so it keeps probing).
        const supervisor = service === 'supervisor';
        const cfg = configIn(dir, supervisor ? [['pvc.functions.enable_hypervisor', false]] : []);
        const extra = supervisor ? ['--external-services'] : [];
        const child = spawn(process.execPath, [mainOf(service), '--config', cfg, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr.on('data', (d: Buffer) => (output += d.toString()));
        const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
        const sock = socketPath(join(dir, 'run'), service);
        await waitServing(unixTarget(sock), 10_000);
        assert.equal(statSync(sock).mode & 0o777, 0o660);
        const status = await getStatus(unixTarget(sock));
        assert.equal(status.service, service);
        assert.equal(status.node, 'hv1');
        assert.equal(status.pid, child.pid);
        child.kill('SIGTERM');
        assert.equal(await exited, 0, output);
        assert.equal(existsSync(sock), false, 'socket left behind');
        // 'exit' can come before the pipes are drained: wait for the last line before checking the output.
        const stopped = new RegExp(`"msg":"${service} stopped"`);
        await waitUntil(() => output, { what: `the "${service} stopped" log line`, until: (o) => stopped.test(o), timeoutMs: 5000 });
        assert.match(output, stopped);
        assert.doesNotMatch(output, /Passw0rd|pvcdnsPassw0rd|pvcapiPassw0rd/, 'a password reached the log');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test('a malformed config: exit 2, every problem named by key path, nothing started', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvc-badcfg-'));
    try {
      const cfg = configIn(dir, [
        ['pvc.system.fencing.intervals.fence_intervals', 'six'],
        ['pvc.system.migration.target_selector', 'fastest'],
      ]);
      const r = spawnSync(process.execPath, [mainOf('vmd'), '--config', cfg], { encoding: 'utf8', timeout: 10_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /pvc\.system\.fencing\.intervals\.fence_intervals: expected an integer ≥ 0, got "six"/);
      assert.match(r.stderr, /pvc\.system\.migration\.target_selector: expected one of mem, memprov, vcpus, load, vms, got "fastest"/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'a stack trace was printed');
      assert.equal(existsSync(join(dir, 'run')), false, 'the service created its dynamic directory');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--check-config validates without starting and never prints passwords', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvc-chk-'));
    try {
      const cfg = configIn(dir);
      const r = spawnSync(process.execPath, [mainOf('keepaliled'), '--check-config', '--config', cfg], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /config OK: .*pvcnoded\.yaml \(node hv1, coordinator\)/);
      assert.doesNotMatch(r.stdout + r.stderr, /Passw0rd/);
      assert.equal(existsSync(join(dir, 'run')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
