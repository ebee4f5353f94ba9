import { setMaxListeners } from 'node:events';
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
import { inProcessPeers } from '../../support/in-process-peers.js';
import { createVmd, runVmd } from '../../../apps/vmd/src/vmd.js';
import type { VmdApi } from '@pvc/rpc';
import type { ClusterSpec } from './scenario.js';
import type { BmcHost } from './sim-ipmi.js';
import { SimLibvirt } from './sim-libvirt.js';
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
  /** Another node's libvirt (live migration target). */
  libvirt(node: string): SimLibvirt | undefined;
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
 * One simulated node: power, network and BMC reachability, and its libvirtd ({@link SimLibvirt});
 * when powered, a "supervisor" that registers it (daemonstate init), then the real keepaliled
 * (Keepalived) and the real vmd (createVmd/runVmd: reconciler, flusher, migrations), each on its
 * own FakeZkServer session, in virtual time.
 */
export class SimNode implements BmcHost {
  readonly config: Config;
  readonly libvirt: SimLibvirt;
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
  /** vmd's own session. */
  vmdZk: ZkClient | undefined;
  keepalived: Keepalived | undefined;
  private vmd: VmdApi | undefined;
  private life: AbortController | undefined;

  constructor(
    readonly name: string,
    private readonly env: NodeEnv,
  ) {
    this.config = nodeConfig(name, env.spec);
    this.libvirt = new SimLibvirt({
      name, clock: env.clock, reachable: () => this.powered && this.network, peer: (n) => env.libvirt(n), log: (text) => env.log(name, text),
    });
  }

  get coordinator(): boolean {
    return this.config.isCoordinator;
  }

  /** The ZK sessions of this node's services (keepaliled's, vmd's). */
  sessions(): ZkClient[] {
    return [this.zk, this.vmdZk].filter((z): z is ZkClient => z !== undefined);
  }

  /** Power on: boots after {@link BOOT_MS}. */
  powerOn(why: string): void {
    if (this.powered) return;
    this.powered = true;
    this.env.log(this.name, `power on (${why})`);
    this.libvirt.powerOn();
    const life = new AbortController();
    setMaxListeners(0, life.signal); // a node's services all listen on it, as on a real service's shutdown signal
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
    this.libvirt.powerOff();
    this.libvirt.onChange = undefined;
    this.duties = false;
    const sessions = this.sessions();
    this.zk = undefined;
    this.vmdZk = undefined;
    this.keepalived = undefined;
    this.vmd = undefined;
    for (const zk of sessions) {
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
    for (const zk of this.sessions()) {
      if (this.network && !this.zkCut) this.env.server.heal(zk);
      else this.env.server.partition(zk);
    }
  }

  private async boot(signal: AbortSignal): Promise<void> {
    try {
      const session = (): ZkClient => this.env.server.client({ sessionTimeoutMs: this.env.spec.zkSessionTimeoutMs, localExpiry: true, opTimeoutMs: 2_000 });
      const zk = session();
      this.zk = zk;
      // A node without network cannot reach ZK: its session connects once the network is back.
      this.applyZkReach();
      await this.register(zk, signal);
      // vmd starts after the supervisor registered the node (systemd: After=), with its own session.
      const vmdZk = session();
      this.vmdZk = vmdZk;
      this.applyZkReach();
      const ports = { zk: vmdZk, hv: this.libvirt, clock: this.env.clock, logger: this.env.logger.child({ node: this.name, service: 'vmd' }), migrator: this.libvirt.migrator() };
      const vmd = createVmd(this.config, ports);
      this.vmd = vmd.api;
      this.libvirt.onChange = () => vmd.reconciler.trigger();
      const k = new Keepalived({
        config: this.config, zk, clock: this.env.clock, logger: this.env.logger.child({ node: this.name }),
        peers: this.peers(), host: { memory: () => this.memory(), load1: () => Promise.resolve(0.1) },
        ipmi: this.env.ipmi, reset: { reset: (reason) => this.selfReset(reason) }, zkSessionTimeoutMs: this.env.spec.zkSessionTimeoutMs, shutdown: signal,
        witness: this.env.witness.ports(this),
        // A powered-off node's code may still unwind (step-down attempts that fail): not events.
        events: (e) => signal.aborted || this.env.event(e),
      });
      this.keepalived = k;
      k.keepalive.onResult((ok) => {
        if (ok) this.lastKeepaliveOk = this.env.clock.now();
      });
      await Promise.all([runVmd(this.config, ports, vmd.reconciler, signal), k.run(signal)]);
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

  private async memory(): Promise<{ totalMiB: number; usedMiB: number; freeMiB: number }> {
    const used = (await this.vmd?.getResources({}))?.memAllocMib ?? 0;
    return { totalMiB: this.env.spec.memoryMiB, usedMiB: used, freeMiB: this.env.spec.memoryMiB - used };
  }

  private selfReset(reason: string): Promise<void> {
    this.env.log(this.name, `self-reset (${reason})`);
    this.powerOff('suicide reset');
    this.powerOn('reset');
    return new Promise(() => undefined);
  }

  private peers(): Peers {
    const vmd = (): VmdApi => {
      if (!this.vmd || !this.powered) throw new Error('vmd is not running');
      return this.vmd;
    };
    return inProcessPeers(vmd, (on, reason) => {
      if (this.powered && this.duties !== on) {
        this.duties = on;
        this.env.log(this.name, `duties ${on ? 'on' : 'off'} (${reason})`);
      }
      return Promise.resolve();
    });
  }
}
