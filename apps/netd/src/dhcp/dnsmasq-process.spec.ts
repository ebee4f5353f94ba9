import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, rejectionOf, VirtualClock } from '@pvc/runtime';
import type { DnsmasqNetwork } from './dnsmasq-args.js';
import { DnsmasqProcess } from './dnsmasq-process.js';
import { DhcpError } from './errors.js';
import { FakeDnsmasqExec, FakeDnsmasqHost } from './testing/fake-dnsmasq.js';

const NET: DnsmasqNetwork = {
  vni: '100', domain: 'net100.local', ip4Gateway: '10.100.0.1', ip6Gateway: null,
  dhcp4Flag: true, dhcp6Flag: false, dhcp4Start: '10.100.0.100', dhcp4End: '10.100.0.200',
};

function setup() {
  const clock = new VirtualClock(1_000_000);
  const exec = new FakeDnsmasqExec();
  const host = new FakeDnsmasqHost();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: 'test', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const proc = new DnsmasqProcess('100', {
    exec, clock, logger, host,
    dirs: { dynamicDirectory: '/run/pvc', logDirectory: '/var/log/pvc' },
    zk: { hosts: ['hv1', 'hv2'], port: 2181 },
    hookCommand: ['/usr/bin/node', '/opt/pvc/lease-hook.js'],
  });
  /** Starts and lets the start check pass. */
  const start = async (net = NET, res: { mac: string; ipaddr: string }[] = []): Promise<void> => {
    const p = proc.start(net, res);
    await clock.advance(500);
    await p;
  };
  const transitions = (): string[] => lines.filter((l) => typeof l.to === 'string').map((l) => `${String(l.from)}->${String(l.to)}`);
  return { clock, exec, host, proc, lines, start, transitions };
}

test('start: dnsmasq runs under sh (stderr to the log) with the args and env; running once the start check passes', async () => {
  const { exec, host, proc, start, transitions } = setup();
  await start(NET, [{ mac: '52:54:00:00:00:01', ipaddr: '10.100.0.10' }]);
  assert.equal(proc.state, 'running');
  const child = exec.children[0]!;
  assert.equal(child.command, '/bin/sh');
  assert.deepEqual(child.args.slice(0, 4), ['-c', 'exec "$@" 2>>"$0"', '/var/log/pvc/dnsmasq/dnsmasq-100.log', '/usr/sbin/dnsmasq']);
  assert.ok(child.args.includes('--dhcp-range=10.100.0.100,10.100.0.200,48h'));
  assert.deepEqual(child.env, { DNSMASQ_BRIDGE_INTERFACE: 'vmbr100', PVC_ZK_HOSTS: 'hv1,hv2', PVC_ZK_PORT: '2181' });
  assert.deepEqual(host.calls, ['prepare', 'sync true'], 'files prepared and reservations written before the spawn');
  assert.deepEqual(transitions(), ['stopped->starting', 'starting->running']);
});

test('start failure: dnsmasq exits during the check -> DNSMASQ_START_FAILED with the log tail, stopped, no retry', async () => {
  const { clock, exec, proc } = setup();
  exec.failStart = 1;
  const err = await rejectionOf(proc.start(NET), DhcpError);
  assert.equal(err.code, 'DNSMASQ_START_FAILED');
  assert.match(err.message, /Cannot assign requested address/);
  assert.equal(proc.state, 'stopped');
  await clock.advance(120_000);
  assert.equal(exec.children.length, 1, 'nothing restarted it');
});

test('bad network: DHCP_BAD_NETWORK naming the key, nothing spawned', async () => {
  const { exec, proc } = setup();
  const err = await rejectionOf(proc.start({ ...NET, ip4Gateway: null }), DhcpError);
  assert.equal(err.code, 'DHCP_BAD_NETWORK');
  assert.match(err.message, /\/networks\/100\/ip4_gateway/);
  assert.equal(exec.children.length, 0);
});

test('a crash is logged and restarted after a delay that doubles per crash; a stop cancels a pending restart', async () => {
  const { clock, exec, proc, lines, start } = setup();
  await start();
  exec.children[0]!.exit(1);
  await clock.advance(0);
  assert.equal(proc.state, 'backoff');
  assert.ok(lines.some((l) => l.msg === 'dnsmasq is down; restarting after a delay' && l.restartInMs === 1000));
  await clock.advance(999);
  assert.equal(exec.children.length, 1, 'not before the delay');
  await clock.advance(1 + 500);
  assert.equal(exec.children.length, 2);
  assert.equal(proc.state, 'running');
  exec.children[1]!.exit(1);
  await clock.advance(0);
  assert.ok(lines.some((l) => l.msg === 'dnsmasq is down; restarting after a delay' && l.restartInMs === 2000), 'second crash: 2 s');
  await proc.stop();
  await clock.advance(60_000);
  assert.equal(exec.children.length, 2, 'the stop cancelled the restart');
  assert.equal(proc.state, 'stopped');
});

test('a restart that fails at once is retried with the next delay', async () => {
  const { clock, exec, proc, start } = setup();
  await start();
  exec.failStart = 1;
  exec.children[0]!.exit(1);
  await clock.advance(1000 + 500);
  assert.equal(exec.children.length, 2);
  assert.equal(proc.state, 'backoff');
  await clock.advance(2000 + 500);
  assert.equal(exec.children.length, 3);
  assert.equal(proc.state, 'running');
});

test('stop: SIGTERM, then SIGKILL after the grace period when dnsmasq ignores it', async () => {
  const { clock, exec, proc, lines, start } = setup();
  exec.ignoreTerm = true;
  await start();
  const stopped = proc.stop('relinquish');
  await clock.advance(999);
  assert.deepEqual(exec.children[0]!.signals, ['SIGTERM']);
  await clock.advance(1);
  await stopped;
  assert.deepEqual(exec.children[0]!.signals, ['SIGTERM', 'SIGKILL']);
  assert.equal(proc.state, 'stopped');
  assert.ok(lines.some((l) => l.msg === 'dnsmasq did not stop on SIGTERM; sending SIGKILL'));
});

test('start again with the same parameters: no restart; changed parameters: restart; update while stopped: nothing', async () => {
  const { clock, exec, proc, start } = setup();
  await proc.update(NET);
  assert.equal(exec.children.length, 0);
  await start();
  await start();
  assert.equal(exec.children.length, 1);
  const p = proc.update({ ...NET, domain: 'renamed.local' });
  await clock.advance(500);
  await p;
  assert.equal(exec.children.length, 2);
  assert.deepEqual(exec.children[0]!.signals, ['SIGTERM']);
  assert.ok(exec.children[1]!.args.includes('--domain=renamed.local'));
  assert.equal(proc.state, 'running');
});

test('reservations: a change rewrites the files and SIGHUPs dnsmasq; no change, no SIGHUP', async () => {
  const { exec, host, proc, start } = setup();
  await start(NET, [{ mac: '52:54:00:00:00:01', ipaddr: '10.100.0.10' }]);
  await proc.setReservations([{ mac: '52:54:00:00:00:01', ipaddr: '10.100.0.10' }]);
  assert.deepEqual(exec.children[0]!.signals, []);
  await proc.setReservations([]);
  assert.deepEqual(exec.children[0]!.signals, ['SIGHUP']);
  assert.equal(host.files.size, 0);
});

test('a dnsmasq of this network left by an earlier netd is stopped before the start', async () => {
  const { host, proc, start } = setup();
  host.leftover = 4242;
  host.leftoverAlive = true;
  await start();
  assert.deepEqual(host.signalled.slice(0, 2), [[4242, 'SIGTERM'], [4242, 0]]);
  assert.equal(proc.state, 'running');
});

test('remove: stops and removes the files', async () => {
  const { host, proc, start } = setup();
  await start();
  await proc.remove();
  assert.equal(proc.state, 'stopped');
  assert.equal(host.calls.at(-1), 'remove');
});
