// libs/hostnet's real sysctl port (`sysctl` through Exec) in a throw-away network namespace: the
// supervisor's plan is applied there for real (net.* sysctls are per namespace, so the host is
// left alone), read back, and a second pass changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { applySysctls, createExecSysctl, planSysctls } from '@pvc/hostnet';
import { createExec, silentLogger, type Exec } from '@pvc/runtime';
import { dump } from 'js-yaml';

const NS = `pvc-sysctl-${process.pid}`;
const host = createExec();

/** Exec whose commands run inside the namespace. */
function inNamespace(exec: Exec): Exec {
  return {
    run: (cmd, args, opts) => exec.run('ip', ['netns', 'exec', NS, cmd, ...args], opts),
    spawn: (cmd, args, opts) => exec.spawn('ip', ['netns', 'exec', NS, cmd, ...args], opts),
  };
}

async function must(cmd: string, args: string[]): Promise<void> {
  const r = await host.run(cmd, args);
  assert.equal(r.exitCode, 0, `${cmd} ${args.join(' ')}: ${r.stderr} (these tests need root and iproute2)`);
}

before(async () => {
  await must('ip', ['netns', 'add', NS]);
  // The cluster device, and an upstream device with a dotted (VLAN-style) name, written with '/' in
  // sysctl keys. veth pairs, as this kernel (gVisor here) may lack the dummy and vlan link types.
  await must('ip', ['-n', NS, 'link', 'add', 'ens4', 'type', 'veth', 'peer', 'name', 'ens4p']);
  await must('ip', ['-n', NS, 'link', 'add', 'ens4.100', 'type', 'veth', 'peer', 'name', 'ens4p100']);
});
after(async () => {
  await host.run('ip', ['netns', 'delete', NS]);
});

test('the plan is applied in a network namespace, read back, and idempotent; missing bridges are reported absent', async () => {
  const config = parseConfig(dump(mutate(['pvc.system.configuration.networking.upstream.device', 'ens4.100'])), 'test.yaml');
  const port = createExecSysctl(inNamespace(host));
  const plan = planSysctls(config);
  await port.write('net.ipv4.conf.ens4.rp_filter', '1');
  const first = await applySysctls(port, plan, silentLogger());
  const outcome = Object.fromEntries(first.map((r) => [r.key, r.outcome]));
  assert.equal(outcome['net.ipv4.conf.brcluster.rp_filter'], 'absent', 'the bridge does not exist (only the sysctls are applied here, not the interfaces)');
  assert.equal(outcome['net.ipv4.conf.brupstream.rp_filter'], 'absent');
  assert.equal(outcome['net.ipv4.conf.ens4.rp_filter'], 'set');
  assert.equal(outcome['net.ipv4.ip_forward'], 'set', 'a new namespace does not forward');
  for (const s of plan) {
    if (outcome[s.key] === 'absent') continue;
    assert.notEqual(outcome[s.key], 'failed', s.key);
    assert.equal(await port.read(s.key), s.value, `${s.key} read back`);
  }
  assert.equal(await port.read('net.ipv4.conf.ens4/100.rp_filter'), '0');
  const second = await applySysctls(port, plan, silentLogger());
  assert.deepEqual(second.filter((r) => r.outcome === 'set'), [], 'second pass changed something');
});

test('a refused write is reported, not thrown', async () => {
  const port = createExecSysctl(inNamespace(host));
  const [r] = await applySysctls(port, [{ key: 'net.ipv4.ip_forward', value: 'banana', reason: 'test' }], silentLogger());
  assert.equal(r?.outcome, 'failed');
  assert.match(r?.error ?? '', /sysctl net\.ipv4\.ip_forward=banana failed/);
});
