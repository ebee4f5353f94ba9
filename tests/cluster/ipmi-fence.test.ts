/**
 * The keepaliled IPMI adapter and fence procedure against real ipmitool and the harness's ipmi_sim
 * BMCs. ipmitool runs inside hv1's namespaces (as a fencing coordinator would), so every packet stays
 * on the cluster's bridges.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger, realClock, rejectionOf } from '@pvc/runtime';
import type { Exec, ExecOptions } from '@pvc/runtime';
import { fenceIpmi } from '@pvc/ipmi';
import { createIpmitoolIpmi } from '@pvc/ipmi';
import { IpmiError } from '@pvc/ipmi';
import type { Ipmi, IpmiTarget } from '@pvc/ipmi';
import { createCluster, HostPoweredOffError, missingPrerequisites } from './harness/index.js';
import type { Cluster, ClusterHost } from './harness/index.js';

const NAME = 'ipmif';
const TIMEOUT_MS = 5000;

/** An Exec whose commands run inside a harness host; records the options each run received. */
function execInside(host: ClusterHost, seen: ExecOptions[]): Exec {
  return {
    run: (cmd, args, opts = {}) => {
      seen.push(opts);
      return host.exec(cmd, args, opts);
    },
    spawn: () => {
      throw new Error('spawn is not needed by the IPMI adapter');
    },
  };
}

const ipmiErrorOf = (p: Promise<unknown>): Promise<IpmiError> => rejectionOf(p, IpmiError);

/** The root-namespace pid of a host's PID 1: a new one at every boot. */
async function bootId(host: ClusterHost): Promise<string> {
  return (await readFile(join(host.dirs.root, 'run', 'init.pid'), 'utf8')).trim();
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = realClock.now();
  const v = await fn();
  return [v, realClock.now() - t0];
}

describe('IPMI fencing with real ipmitool against ipmi_sim BMCs [root only]', () => {
  let cluster: Cluster | undefined;
  let hv1: ClusterHost, hv2: ClusterHost;
  let ipmi: Ipmi;
  const seen: ExecOptions[] = [];
  const logs: string[] = [];

  before(async () => {
    const missing = missingPrerequisites();
    assert.deepEqual(missing, [], `prerequisites missing:\n${missing.join('\n')}`);
    const [c, ms] = await timed(() => createCluster({ name: NAME, hosts: 2, coordinators: 1 }));
    cluster = c;
    console.log(`bring-up took ${(ms / 1000).toFixed(1)} s`);
    [hv1, hv2] = c.hosts as [ClusterHost, ClusterHost];
    ipmi = createIpmitoolIpmi(execInside(hv1, seen));
  });

  after(async () => {
    await cluster?.destroy();
  });

  it('reads hv2 as on', async () => {
    const [state, ms] = await timed(() => ipmi.powerStatus(hv2.ipmi, { timeoutMs: TIMEOUT_MS }));
    console.log(`power status: ${ms} ms`);
    assert.equal(state, 'on');
    assert.equal(seen.at(-1)?.env?.['IPMI_PASSWORD'], hv2.ipmi.pass, 'the password goes by environment');
  });

  it('fences hv2: off confirmed while libvirtd is really gone, then back on with a new boot', async () => {
    const bootBefore = await bootId(hv2);
    const during: { poweredOn?: boolean; virshFromHv1?: number; virshOnHv2?: string } = {};
    // Observe the host between the confirmed off and the power on.
    const observing: Ipmi = {
      powerStatus: (t, o) => ipmi.powerStatus(t, o),
      powerOff: (t, o) => ipmi.powerOff(t, o),
      powerOn: async (t, o) => {
        during.poweredOn = await hv2.isPoweredOn();
        during.virshFromHv1 = (await hv1.exec('virsh', ['-c', hv2.libvirtUri, 'version'], { timeoutMs: 30_000 })).exitCode;
        during.virshOnHv2 = await hv2.virsh(['version']).then(
          (r) => `answered (exit ${r.exitCode})`,
          (e: unknown) => (e instanceof HostPoweredOffError ? 'powered off' : String(e)),
        );
        return ipmi.powerOn(t, o);
      },
    };
    const logger = createLogger({ service: 'test', destination: { write: (s: string) => void logs.push(s) } });
    const result = await fenceIpmi({ ipmi: observing, clock: realClock, logger }, hv2.ipmi, { timeoutMs: TIMEOUT_MS });
    console.log(`fence: ${result.outcome} in ${result.durationMs} ms: ${result.steps.map((s) => `${s.step} ${s.durationMs} ms/${s.attempts}`).join(', ')}`);

    assert.equal(result.outcome, 'success', result.reason);
    assert.equal(result.poweredBackOn, true);
    assert.deepEqual(result.steps.map((s) => [s.step, s.ok]), [
      ['power-off', true], ['confirm-off', true], ['power-on', true], ['confirm-on', true],
    ]);
    assert.equal(during.poweredOn, false, 'hv2 was still on after the confirmed off');
    assert.notEqual(during.virshFromHv1, 0, "hv2's libvirtd answered while powered off");
    assert.equal(during.virshOnHv2, 'powered off');
    await hv2.waitForLibvirt(60_000);
    const v = await hv2.virsh(['version']);
    assert.equal(v.exitCode, 0, v.stderr);
    assert.match(v.stdout, /Running hypervisor: QEMU/);
    assert.notEqual(await bootId(hv2), bootBefore, 'hv2 did not reboot');
    const chassis = await readFile(join(hv2.dirs.log, 'chassis.log'), 'utf8');
    assert.match(chassis, /set power 0[\s\S]*get power[\s\S]*set power 1[\s\S]*get power/);
    assert.equal(await ipmi.powerStatus(hv2.ipmi), 'on');
    for (const l of logs) assert.ok(!l.includes(hv2.ipmi.pass), `password in a log line: ${l}`);
  });

  it('a wrong password → IPMI_AUTH quickly; the error does not contain it', async () => {
    const wrong = 'Wr0ng-IPMI-pass';
    const target: IpmiTarget = { ...hv2.ipmi, pass: wrong };
    const [err, ms] = await timed(() => ipmiErrorOf(ipmi.powerStatus(target, { timeoutMs: TIMEOUT_MS })));
    console.log(`wrong password: ${ms} ms: ${err.message}`);
    assert.equal(err.code, 'IPMI_AUTH');
    assert.equal(seen.at(-1)?.env?.['IPMI_PASSWORD'], wrong, 'the Exec did receive the wrong password');
    assert.ok(!err.message.includes(wrong) && !err.message.includes(hv2.ipmi.pass), err.message);
    assert.match(err.message, new RegExp(`BMC ${hv2.ipmi.host.replace(/\./g, '\\.')}:623`));
    assert.ok(ms < 2000, `took ${ms} ms`);
  });

  it('an unreachable BMC (closed port) → IPMI_UNREACHABLE within the call bound; a fence fails within 3 × it', async () => {
    const target: IpmiTarget = { ...hv2.ipmi, port: 6299 };
    const [err, ms] = await timed(() => ipmiErrorOf(ipmi.powerStatus(target, { timeoutMs: TIMEOUT_MS })));
    console.log(`closed port: ${ms} ms: ${err.message}`);
    assert.equal(err.code, 'IPMI_UNREACHABLE');
    assert.ok(ms <= TIMEOUT_MS + 500, `took ${ms} ms`);

    const fenceTimeout = 3000;
    const [result, fenceMs] = await timed(() => fenceIpmi({ ipmi, clock: realClock }, target, { timeoutMs: fenceTimeout }));
    console.log(`fence of an unreachable BMC: ${result.outcome} in ${fenceMs} ms: ${result.reason}`);
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(result.steps.map((s) => [s.step, s.errorCode]), [
      ['power-off', 'IPMI_UNREACHABLE'], ['confirm-off', 'IPMI_UNREACHABLE'],
    ]);
    assert.match(result.reason, /^node not confirmed off: power off failed \(IPMI power off \(BMC [\d.]+:6299\): no session/);
    assert.ok(fenceMs <= 3 * fenceTimeout, `took ${fenceMs} ms`);
    assert.equal(await hv2.isPoweredOn(), true, 'nothing was done to hv2');
  });
});
