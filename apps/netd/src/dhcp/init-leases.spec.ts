import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createLogger, VirtualClock, withTempDir } from '@pvc/runtime';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DnsmasqNetwork } from './dnsmasq-args.js';
import { DnsmasqProcess } from './dnsmasq-process.js';
import { hookScriptText } from './hook-script.js';
import { handInitLeases } from './init-leases.js';
import { dnsmasqLayout } from './layout.js';
import type { InitLeases } from './lease-store.js';
import { FakeDnsmasqExec, FakeDnsmasqHost } from './testing/fake-dnsmasq.js';

const NET: DnsmasqNetwork = {
  vni: '100', domain: 'net100.local', ip4Gateway: '10.100.0.1', ip6Gateway: null,
  dhcp4Flag: true, dhcp6Flag: false, dhcp4Start: '10.100.0.100', dhcp4End: '10.100.0.200',
};
const LAYOUT = dnsmasqLayout({ dynamicDirectory: '/run/pvc', logDirectory: '/var/log/pvc' }, '100');
const TWO: InitLeases = {
  text: '1700000000 52:54:00:00:00:01 10.100.0.101 a *\n1700000000 52:54:00:00:00:02 10.100.0.102 * *\n',
  count: 2,
  leftOut: [{ key: '/networks/100/dhcp4_leases/52:54:00:00:00:03', problem: 'ipaddr is empty' }],
};

function logged() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  return { lines, logger };
}

test('handInitLeases: the stored leases written to init-leases-<vni>, the variable names the file; a left-out lease logged with its key', async () => {
  const host = new FakeDnsmasqHost();
  const { lines, logger } = logged();
  const env = await handInitLeases(() => Promise.resolve(TWO), host, LAYOUT, logger);
  assert.deepEqual(env, { PVC_INIT_LEASES: '/run/pvc/dnsmasq/init-leases-100' });
  assert.equal(host.initLeases, TWO.text);
  assert.ok(lines.some((l) => l.key === '/networks/100/dhcp4_leases/52:54:00:00:00:03' && l.problem === 'ipaddr is empty'));
});

test('handInitLeases: a failed read removes the file and sets no variable (the hook reads Zookeeper itself); no source = nothing', async () => {
  const host = new FakeDnsmasqHost();
  host.initLeases = 'stale';
  const { lines, logger } = logged();
  const env = await handInitLeases(() => Promise.reject(new Error('CONNECTION_LOSS')), host, LAYOUT, logger);
  assert.deepEqual(env, {});
  assert.equal(host.initLeases, undefined, 'a stale file is not left for the hook');
  assert.ok(lines.some((l) => String(l.msg).startsWith('stored leases not handed to dnsmasq') && String(l.err).includes('CONNECTION_LOSS')));
  assert.deepEqual(await handInitLeases(undefined, host, LAYOUT, logger), {});
});

test('DnsmasqProcess: the init file is written before every spawn (start and crash restart) and named in the spawn environment', async () => {
  const clock = new VirtualClock(1_000_000);
  const exec = new FakeDnsmasqExec();
  const host = new FakeDnsmasqHost();
  let reads = 0;
  const proc = new DnsmasqProcess('100', {
    exec, clock, logger: logged().logger, host,
    dirs: { dynamicDirectory: '/run/pvc', logDirectory: '/var/log/pvc' },
    zk: { hosts: ['hv1'], port: 2181 },
    hookCommand: ['/usr/bin/node', '/opt/pvc/lease-hook.js'],
    initLeases: () => {
      reads += 1;
      return Promise.resolve(TWO);
    },
  });
  const p = proc.start(NET);
  await clock.advance(500);
  await p;
  assert.deepEqual(host.calls, ['prepare', 'sync false', 'init-leases 2']);
  assert.equal(exec.children[0]!.env?.PVC_INIT_LEASES, '/run/pvc/dnsmasq/init-leases-100');
  exec.children[0]!.exit(1);
  await clock.advance(1_000);
  await clock.advance(500);
  assert.equal(exec.children.length, 2, 'restarted after the crash');
  assert.equal(reads, 2, 'the leases are read again for the restart');
  assert.equal(exec.children[1]!.env?.PVC_INIT_LEASES, '/run/pvc/dnsmasq/init-leases-100');
  await proc.stop();
});

test('the wrapper: init with PVC_INIT_LEASES prints that file and runs no hook; without it, and for other actions, the hook runs', () =>
  withTempDir('hook-wrapper-', async (dir) => {
    const script = join(dir, 'lease-hook');
    await writeFile(script, hookScriptText(['/bin/echo', 'hook ran:']), { mode: 0o755 });
    await writeFile(join(dir, 'leases'), TWO.text);
    const run = (args: string[], env: Record<string, string>): string => {
      const r = spawnSync(script, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    assert.equal(run(['init'], { PVC_INIT_LEASES: join(dir, 'leases') }), TWO.text);
    assert.equal(run(['init'], {}), 'hook ran: init\n');
    assert.equal(run(['init'], { PVC_INIT_LEASES: join(dir, 'missing') }), 'hook ran: init\n', 'an unreadable file: the hook itself');
    assert.equal(run(['add', '52:54:00:00:00:01', '10.100.0.101'], { PVC_INIT_LEASES: join(dir, 'leases') }), 'hook ran: add 52:54:00:00:00:01 10.100.0.101\n');
  }));
