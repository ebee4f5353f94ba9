import { validateConfig, type Config } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import type { Clock, Logger } from '@pvc/runtime';
import { AbortedError, describeError } from '@pvc/runtime';
import { paths, type ZkClient } from '@pvc/zk';
import type { FakeZkServer } from '@pvc/zk/testing';
import type { Ipmi } from '@pvc/ipmi';
import { Keepalived } from '../../../apps/keepaliled/src/service.js';
import type { KeepalivedEvent } from '../../../apps/keepaliled/src/model.js';
import type { Peers } from '../../../apps/keepaliled/src/ports.js';
import type { ClusterSpec } from './scenario.js';
import type { BmcHost } from './sim-ipmi.js';
import { SimVmd, type SimHypervisor } from './sim-vmd.js';
import type { SimWitnessNet } from './sim-witness.js';

/** What a simulated node needs from its cluster. */
export interface NodeEnv {
  clock: Clock;
  server: FakeZkServer;
  ipmi: Ipmi;
  spec: ClusterSpec;
  logger: Logger;
  /** The cluster network of the suicide peer check. */
  witness: SimWitnessNet;
  log(node: string, text: string): void;
  event(e: KeepalivedEvent): void;
}

/** Seconds from power-on to the node's services running. */
export const BOOT_MS = 3_000;

function nodeConfig(name: string, spec: ClusterSpec): Config {
  return validateConfig(
    mutate(
      ['pvc.node', name],
      ['pvc.cluster.coordinators', spec.coordinators],
      ['pvc.functions.enable_storage', false],
      ['pvc.system.fencing.intervals.keepalive_interval', spec.keepaliveInterval],
      ['pvc.system.fencing.intervals.fence_intervals', spec.fenceIntervals],
      ['pvc.system.fencing.intervals.suicide_intervals', spec.suicideIntervals],
      ['pvc.system.fencing.actions.successful_fence', spec.successfulFence],
      ['pvc.system.fencing.actions.failed_fence', spec.failedFence === 'migrate' ? 'migrate' : 'None'],
      ['pvc.system.fencing.ipmi.host', `${name}-lom`],
      ['pvc.system.fencing.peer_check_port', spec.peerCheck ? 7374 : 0],
      ['pvc.system.configuration.logging.log_keepalives', false],
    ),
    `sim:${name}`,
  );
}

/**
 * One simulated node: power, network and BMC reachability; when powered, a "supervisor" that
 * registers it (daemonstate init) and the real keepaliled logic (Keepalived) with a stand-in vmd,
 * all on one FakeZkServer session in virtual time.
 */
export class SimNode implements BmcHost, SimHypervisor {
  readonly running = new Set<string>();
  readonly config: Config;
  powered = false;
  network = true;
  /** Only this node's ZK traffic is cut (its network still reaches the other nodes). */
  zkCut = false;
  ipmiReachable = true;
  ipmiRefusing = false;
  ipmiLatencyMs = 0;
  duties = false;
  /** Clock ms of this node's last successful keepalive (the truth, for the invariants). */
  lastKeepaliveOk = 0;
  zk: ZkClient | undefined;
  keepalived: Keepalived | undefined;
  private vmd: SimVmd | undefined;
  private life: AbortController | undefined;

  constructor(
    readonly name: string,
    private readonly env: NodeEnv,
  ) {
    this.config = nodeConfig(name, env.spec);
  }

  get coordinator(): boolean {
    return this.config.isCoordinator;
  }

  vmLog(what: 'vm-start' | 'vm-stop', vm: string, why: string): void {
    this.env.log(this.name, `${what} ${vm} (${why})`);
  }

  /** Power on: boots after {@link BOOT_MS}. */
  powerOn(why: string): void {
    if (this.powered) return;
    this.powered = true;
    this.env.log(this.name, `power on (${why})`);
    const life = new AbortController();
    this.life = life;
    void this.env.clock.sleep(BOOT_MS, life.signal).then(() => this.boot(life.signal), () => undefined);
  }

  /** Power off: everything on the node stops at once; its ZK session expires later. */
  powerOff(why: string): void {
    if (!this.powered) return;
    this.powered = false;
    this.env.log(this.name, `power off (${why})`);
    this.life?.abort(new Error('power off'));
    this.life = undefined;
    for (const vm of [...this.running].sort()) this.vmLog('vm-stop', vm, 'power off');
    this.running.clear();
    this.duties = false;
    const zk = this.zk;
    this.zk = undefined;
    this.keepalived = undefined;
    if (zk) {
      this.env.server.disconnect(zk);
      void zk.close().catch(() => undefined);
    }
  }

  setNetwork(on: boolean): void {
    this.network = on;
    this.applyZkReach();
  }

  /** Cuts (or restores) this node's ZK traffic alone: a firewall, a broken route to the ensemble. */
  setZkCut(on: boolean): void {
    this.zkCut = on;
    this.applyZkReach();
  }

  private applyZkReach(): void {
    if (!this.zk) return;
    if (this.network && !this.zkCut) this.env.server.heal(this.zk);
    else this.env.server.partition(this.zk);
  }

  private async boot(signal: AbortSignal): Promise<void> {
    try {
      const zk = this.env.server.client({ sessionTimeoutMs: this.env.spec.zkSessionTimeoutMs, localExpiry: true, opTimeoutMs: 2_000 });
      this.zk = zk;
      // A node without network cannot reach ZK: its session connects once the network is back.
      if (!this.network || this.zkCut) this.env.server.partition(zk);
      await this.register(zk, signal);
      const vmd = new SimVmd({ node: this.name, zk, clock: this.env.clock, hv: this });
      this.vmd = vmd;
      const k = new Keepalived({
        config: this.config, zk, clock: this.env.clock, logger: this.env.logger.child({ node: this.name }),
        peers: this.peers(), host: { memory: () => Promise.resolve(this.memory()), load1: () => Promise.resolve(0.1) },
        ipmi: this.env.ipmi, reset: { reset: (reason) => this.selfReset(reason) }, zkSessionTimeoutMs: this.env.spec.zkSessionTimeoutMs, shutdown: signal,
        witness: this.env.witness.ports(this),
        // A powered-off node's code may still unwind (step-down attempts that fail): not events.
        events: (e) => signal.aborted || this.env.event(e),
      });
      this.keepalived = k;
      k.keepalive.onResult((ok) => {
        if (ok) this.lastKeepaliveOk = this.env.clock.now();
      });
      await Promise.all([vmd.run(signal), k.run(signal)]);
    } catch (err) {
      if (!(err instanceof AbortedError) && !signal.aborted) this.env.log(this.name, `services failed: ${describeError(err)}`);
    }
  }

  /** The supervisor's part: daemon state `init` (the node object exists from cluster set-up). */
  private async register(zk: ZkClient, signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await zk.waitConnected({ timeoutMs: Infinity, signal });
        const k = paths.node(this.name);
        await zk.write([[k.daemonState, 'init'], [k.routerState, this.coordinator ? 'secondary' : 'client']]);
        this.env.log(this.name, 'boot: registered (daemonstate init)');
        return;
      } catch (err) {
        if (signal.aborted) throw err;
        await this.env.clock.sleep(1_000, signal);
      }
    }
  }

  private memory(): { totalMiB: number; usedMiB: number; freeMiB: number } {
    const used = this.vmd?.resources().memAllocMib ?? 0;
    return { totalMiB: this.env.spec.memoryMiB, usedMiB: used, freeMiB: this.env.spec.memoryMiB - used };
  }

  private selfReset(reason: string): Promise<void> {
    this.env.log(this.name, `self-reset (${reason})`);
    this.powerOff('suicide reset');
    this.powerOn('reset');
    return new Promise(() => undefined);
  }

  private peers(): Peers {
    const vmd = (): SimVmd => {
      if (!this.vmd || !this.powered) throw new Error('vmd is not running');
      return this.vmd;
    };
    return {
      resources: () => Promise.resolve().then(() => vmd().resources()),
      networkStats: () => Promise.resolve({ statsJson: '{}', networkCount: 0 }),
      storageStats: () => Promise.resolve({ enabled: false, osdCount: 0 }),
      stopAllVms: (reason) => Promise.resolve().then(() => vmd().stopAll(reason)),
      setPrimaryDuties: (on, reason) => {
        if (this.powered && this.duties !== on) {
          this.duties = on;
          this.env.log(this.name, `duties ${on ? 'on' : 'off'} (${reason})`);
        }
        return Promise.resolve();
      },
      flushRbdLocks: (images) => Promise.resolve({ flushed: [...images], failed: [] }),
    };
  }
}
