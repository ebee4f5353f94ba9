import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeCommand } from '@pvc/runtime';
import type { Exec, ExecOptions, ExecResult } from '@pvc/runtime';
import { ClusterError, HostPoweredOffError } from './errors.js';
import { removeService, USER_SERVICE_ORDER, writeService } from './host-files.js';
import { setHostLinks } from './network.js';
import { IPMI_PORT } from './plan.js';
import type { ClusterPlan, HostPlan } from './plan.js';
import { HOST_POWER_SH, runOk, waitFor } from './run.js';
import type { ClusterHost, ServiceSpec } from './types.js';

/** Exit code of `host-power.sh exec` when the host is off. */
const POWERED_OFF_EXIT = 111;

/** The libvirt URI of a host, reachable from every other host and from the root namespace. */
export function libvirtUri(host: HostPlan): string {
  return `qemu+tcp://${host.ips.cluster}/system`;
}

/**
 * Runs `virsh -c <uri> version` from the root namespace; resolves when libvirtd answers. With
 * `local`, runs `virsh -c qemu:///system version` inside the host instead (its own unix socket): a
 * host with bare links has no cluster address until its node services' bring-up.
 */
export async function waitForLibvirtd(exec: Exec, host: HostPlan, timeoutMs: number, local = false): Promise<void> {
  const uri = local ? 'qemu:///system' : libvirtUri(host);
  const cmd = local ? ['bash', [HOST_POWER_SH, host.dirs.root, 'exec', 'virsh', '-c', uri, 'version']] as const : ['virsh', ['-c', uri, 'version']] as const;
  await waitFor(`libvirtd of ${host.name} (${uri})`, timeoutMs, async () => {
    const r = await exec.run(cmd[0], cmd[1], { timeoutMs: 10_000 });
    if (r.exitCode !== 0) throw new Error(r.stderr.trim() || `virsh exited ${r.exitCode}`);
    return true;
  });
}

type HostExec = ClusterHost['exec'];

/** SIGKILLs a service's recorded (namespace-local) pid and waits until it is gone (≤ 10 s). */
const KILL_AND_WAIT = 'kill -KILL "$1" 2>/dev/null || exit 0; for i in $(seq 1 200); do kill -0 "$1" 2>/dev/null || exit 0; sleep 0.05; done; exit 1';

/** startService/stopService/restartService of one host: scripts in <hostdir>/services, started like at boot. */
function serviceControl(
  host: HostPlan,
  hostExec: HostExec,
  isOn: () => Promise<boolean>,
): Pick<ClusterHost, 'startService' | 'stopService' | 'restartService' | 'killService'> {
  const pidFile = (name: string): string => join(host.dirs.root, 'run', 'svc', `${name}.pid`);
  const pidOf = async (name: string): Promise<string> => (await readFile(pidFile(name), 'utf8').catch(() => '')).trim();
  const launch = async (name: string, file: string): Promise<void> => {
    const log = join(host.dirs.log, `${name}.log`);
    const r = await hostExec('bash', ['-c', 'setsid -f bash "$1" </dev/null >>"$2" 2>&1', 'start', file, log]);
    if (r.exitCode !== 0) throw new ClusterError('CLUSTER_SERVICE', `${host.name}: cannot start ${name}: ${r.stderr.trim()}`);
  };
  const kill = async (name: string): Promise<void> => {
    const pid = await pidOf(name);
    if (!pid) return;
    const r = await hostExec('bash', ['-c', KILL_AND_WAIT, 'kill', pid]);
    if (r.exitCode !== 0) throw new ClusterError('CLUSTER_SERVICE', `${host.name}: ${name} (pid ${pid}) survived SIGKILL`);
    // The pid is free again: a later kill must not hit whatever process reuses it.
    await rm(pidFile(name), { force: true });
  };
  return {
    async startService(spec: ServiceSpec) {
      const file = await writeService(host, USER_SERVICE_ORDER, spec);
      await launch(spec.name, file);
      if (spec.onBoot === false) await removeService(host, spec.name);
    },
    async restartService(name: string) {
      const dir = join(host.dirs.root, 'services');
      const file = (await readdir(dir).catch(() => [] as string[])).find((f) => f.replace(/^\d\d-/, '') === `${name}.sh`);
      if (!file) throw new ClusterError('CLUSTER_SERVICE', `${host.name}: no service "${name}" to restart`);
      await kill(name);
      await launch(name, join(dir, file));
    },
    killService: kill,
    async stopService(name: string) {
      await removeService(host, name);
      const pid = await pidOf(name);
      if (pid && (await isOn())) await hostExec('kill', ['-TERM', pid]);
    },
  };
}

/** Builds the handle of one host; every side effect goes through `exec` and the sh/ scripts. */
export function createHost(plan: ClusterPlan, host: HostPlan, exec: Exec): ClusterHost {
  const power = (action: string): Promise<ExecResult> =>
    runOk(exec, 'HOST_POWER', 'bash', [HOST_POWER_SH, host.dirs.root, action], { timeoutMs: 30_000 });

  const hostExec = async (cmd: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> => {
    const r = await exec.run('bash', [HOST_POWER_SH, host.dirs.root, 'exec', cmd, ...args], opts);
    if (r.exitCode === POWERED_OFF_EXIT && r.stderr.includes('is powered off')) {
      throw new HostPoweredOffError(host.name, describeCommand(cmd, args, opts.secrets));
    }
    return r;
  };

  const self: ClusterHost = {
    name: host.name,
    index: host.index,
    netns: host.netns,
    clusterIp: host.ips.cluster,
    storageIp: host.ips.storage,
    upstreamIp: host.ips.upstream,
    ipmiIp: host.ips.ipmi,
    coordinator: host.coordinator,
    ipmi: { host: host.ips.ipmi, port: IPMI_PORT, user: plan.ipmi.user, pass: plan.ipmi.pass, cipherSuite: 3 },
    libvirtUri: libvirtUri(host),
    dirs: host.dirs,
    exec: hostExec,
    // With bare links a host just powered on has no cluster address until its bring-up: its own
    // libvirtd is asked through the local socket then (the same daemon; the answer is the same).
    virsh: (args, opts) => hostExec('virsh', ['-c', plan.bareLinks ? 'qemu:///system' : libvirtUri(host), ...args], { timeoutMs: 60_000, ...opts }),
    async powerOff() {
      await power('off');
    },
    async powerOn(opts = {}) {
      await power('on');
      if (opts.wait ?? true) await waitForLibvirtd(exec, host, plan.readyTimeoutMs, plan.bareLinks);
    },
    async isPoweredOn() {
      return (await power('status')).stdout.trim() === 'on';
    },
    // Read by sh/chassis-control.sh before every request.
    setBmcDelay: (ms: number) => setDelayFile(host.dirs.root, 'bmc-delay-ms', ms),
    // Read by sh/host-power.sh at every power-on.
    setPostDelay: (ms: number) => setDelayFile(host.dirs.root, 'post-delay-ms', ms),
    cutNetwork: (nets) => setHostLinks(host, exec, false, nets),
    restoreNetwork: (nets) => setHostLinks(host, exec, true, nets),
    ...serviceControl(host, hostExec, () => self.isPoweredOn()),
    waitForLibvirt: (timeoutMs = plan.readyTimeoutMs) => waitForLibvirtd(exec, host, timeoutMs, plan.bareLinks),
  };
  return self;
}

/** Writes a delay file the host's scripts read (`<ms>`), or removes it for 0. */
async function setDelayFile(root: string, name: string, ms: number): Promise<void> {
  if (ms > 0) await writeFile(join(root, name), `${Math.round(ms)}\n`);
  else await rm(join(root, name), { force: true });
}
