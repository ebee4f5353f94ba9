/**
 * One simulated node on a REAL Zookeeper with the real clock, for benches: what
 * tests/sim/framework/sim-node.ts wires per node (a "supervisor" registering the node, the real
 * keepaliled `Keepalived` and the real vmd `createVmd`/`runVmd`, each on its own session), but each
 * session is a real client ({@link CountingRealZkClient}) and the host is vmd's `FakeHypervisor`
 * reporting the node's VMs as running. No IPMI, no witness (peer check off), no health plugins.
 */
import type { Config } from '@pvc/config';
import { validateConfig } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { IpmiError, type Ipmi } from '@pvc/ipmi';
import type { VmdApi } from '@pvc/rpc';
import { AbortedError, describeError, realClock, type Logger } from '@pvc/runtime';
import { KEEPALIVED_SESSION_TIMEOUT_MS, paths, type ZkClient } from '@pvc/zk';
import type { KeepalivedEvent } from '../../apps/keepaliled/src/model.js';
import type { Peers } from '../../apps/keepaliled/src/ports.js';
import { inProcessPeers } from './in-process-peers.js';
import { Keepalived } from '../../apps/keepaliled/src/service.js';
import { FakeHypervisor } from '../../apps/vmd/src/host/fake-hypervisor.js';
import { createVmd, runVmd } from '../../apps/vmd/src/vmd.js';
import { CountingRealZkClient, type WireStats } from './counting-real-zk.js';

/** vmd's read timeout in production (apps/vmd/src/main.ts, not exported there). */
const VMD_ZK_READ_TIMEOUT_MS = 1_000;
const MEMORY_MIB = 65_536;

/** What a node needs from the bench. */
export interface RealZkNodeEnv {
  hosts: readonly string[];
  coordinators: readonly string[];
  keepaliveIntervalS: number;
  fenceIntervals: number;
  stats: WireStats;
  logger: Logger;
  /** vmd's ZK read timeout (production: {@link VMD_ZK_READ_TIMEOUT_MS}). */
  vmdReadTimeoutMs?: number;
  /** false: keepaliled alone (vmd not started; its peer calls fail as when vmd is down). */
  vmd?: boolean;
  event(node: string, e: KeepalivedEvent): void;
  /** Every successful keepalive write of this node (real clock ms). */
  keepalive(node: string, atMs: number): void;
}

/** A VM the node's fake hypervisor runs. */
export interface NodeVm {
  uuid: string;
  name: string;
  memoryMiB: number;
}

/** An IPMI that refuses everything: a bench node has no BMC; any call is logged by the fencer. */
const noIpmi: Ipmi = {
  powerStatus: (t) => Promise.reject(new IpmiError('IPMI_UNREACHABLE', t.host, 'power status', 'bench: no BMC')),
  powerOff: (t) => Promise.reject(new IpmiError('IPMI_UNREACHABLE', t.host, 'power off', 'bench: no BMC')),
  powerOn: (t) => Promise.reject(new IpmiError('IPMI_UNREACHABLE', t.host, 'power on', 'bench: no BMC')),
};

function nodeConfig(name: string, env: RealZkNodeEnv): Config {
  return validateConfig(mutate(
    ['pvc.node', name],
    ['pvc.cluster.coordinators', [...env.coordinators]],
    ['pvc.functions.enable_storage', false],
    ['pvc.system.fencing.intervals.keepalive_interval', env.keepaliveIntervalS],
    ['pvc.system.fencing.intervals.fence_intervals', env.fenceIntervals],
    ['pvc.system.fencing.ipmi.host', `${name}-lom`],
    ['pvc.system.fencing.peer_check_port', 0],
    ['pvc.system.configuration.logging.log_keepalives', false],
  ), `bench:${name}`);
}

/** One node: its sessions, its fake hypervisor, its keepaliled and vmd. */
export class RealZkNode {
  readonly config: Config;
  readonly hv = new FakeHypervisor({ clock: realClock });
  readonly sessions: ZkClient[] = [];
  keepalived: Keepalived | undefined;
  private vmd: VmdApi | undefined;
  private readonly life = new AbortController();
  private running: Promise<void> | undefined;

  constructor(readonly name: string, vms: readonly NodeVm[], private readonly env: RealZkNodeEnv) {
    this.config = nodeConfig(name, env);
    for (const vm of vms) this.hv.addRunning(vm.uuid, vm.name, vm.memoryMiB);
  }

  private session(label: 'keepaliled' | 'vmd'): ZkClient {
    const zk = new CountingRealZkClient(label === 'keepaliled'
      ? { hosts: this.env.hosts, clock: realClock, stats: this.env.stats, label, sessionTimeoutMs: KEEPALIVED_SESSION_TIMEOUT_MS, opTimeoutMs: 5_000, localExpiry: true }
      : { hosts: this.env.hosts, clock: realClock, stats: this.env.stats, label, readTimeoutMs: this.env.vmdReadTimeoutMs ?? VMD_ZK_READ_TIMEOUT_MS });
    this.sessions.push(zk);
    return zk;
  }

  /** Starts the node's services (returns at once; they run until {@link stop}). */
  start(): void {
    this.running = this.run(this.life.signal).catch((err: unknown) => {
      if (!(err instanceof AbortedError) && !this.life.signal.aborted) this.env.logger.error({ node: this.name, err: describeError(err) }, 'node services failed');
    });
  }

  private async run(signal: AbortSignal): Promise<void> {
    const zk = this.session('keepaliled');
    await zk.waitConnected({ timeoutMs: Infinity, signal });
    // The supervisor's part: daemon state init; vmd starts after it (systemd After=).
    const k = paths.node(this.name);
    await zk.write([[k.daemonState, 'init'], [k.routerState, this.config.isCoordinator ? 'secondary' : 'client']]);
    const logger = this.env.logger.child({ node: this.name });
    const runs: Promise<void>[] = [];
    if (this.env.vmd !== false) {
      const ports = { zk: this.session('vmd'), hv: this.hv, clock: realClock, logger: logger.child({ service: 'vmd' }) };
      const vmd = createVmd(this.config, ports);
      this.vmd = vmd.api;
      runs.push(runVmd(this.config, ports, vmd.reconciler, signal));
    }
    const keepalived = new Keepalived({
      config: this.config, zk, clock: realClock, logger, peers: this.peers(),
      host: { memory: () => this.memory(), load1: () => Promise.resolve(0.1) }, ipmi: noIpmi,
      reset: { reset: (reason) => Promise.reject(new Error(`bench: no self-reset (${reason})`)) },
      zkSessionTimeoutMs: KEEPALIVED_SESSION_TIMEOUT_MS, shutdown: signal,
      events: (e) => signal.aborted || this.env.event(this.name, e),
    });
    this.keepalived = keepalived;
    keepalived.keepalive.onResult((ok) => {
      if (ok) this.env.keepalive(this.name, realClock.now());
    });
    await Promise.all([...runs, keepalived.run(signal)]);
  }

  /** Stops the services and closes the sessions. */
  async stop(): Promise<void> {
    this.life.abort(new Error('bench end'));
    await this.running;
    await Promise.all(this.sessions.map((s) => s.close().catch(() => undefined)));
  }

  private async memory(): Promise<{ totalMiB: number; usedMiB: number; freeMiB: number }> {
    const used = (await this.vmd?.getResources({}))?.memAllocMib ?? 0;
    return { totalMiB: MEMORY_MIB, usedMiB: used, freeMiB: MEMORY_MIB - used };
  }

  private peers(): Peers {
    const vmd = (): VmdApi => {
      if (!this.vmd) throw new Error('vmd is not running');
      return this.vmd;
    };
    return inProcessPeers(vmd);
  }
}
