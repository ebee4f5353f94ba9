import { silentLogger, VirtualClock } from '@pvc/runtime';
import { baseKeys, newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import type { KeepalivedEvent } from '../../../apps/keepaliled/src/model.js';
import { formatEvent, stamp } from './format.js';
import { Invariants } from './invariants.js';
import type { ClusterSpec, SimEvent } from './scenario.js';
import { SimIpmi } from './sim-ipmi.js';
import { SimNode } from './sim-node.js';
import { SimWitnessNet } from './sim-witness.js';

const STEP_MS = 100;

/** A simulated cluster: nodes, one FakeZkServer, virtual time, the log and the invariants. */
export class SimCluster {
  readonly clock = new VirtualClock(1_800_000_000_000, 2);
  readonly server = new FakeZkServer({ clock: this.clock });
  readonly nodes = new Map<string, SimNode>();
  readonly lines: string[] = [];
  readonly invariants: Invariants;
  /** Called after every step of {@link run} (benchmarks sample the nodes here). */
  onStep: (() => void) | undefined;
  private readonly vmNames = new Map<string, string>();
  private readonly start = this.clock.now();
  private admin: ZkClient | undefined;
  private closed = false;

  constructor(readonly spec: ClusterSpec) {
    const ipmi = new SimIpmi(this.clock, (bmc) => this.nodes.get(bmc.replace(/-lom$/, '')));
    const witness = new SimWitnessNet(this.clock, (name) => this.nodes.get(name), () => this.invariants.zkUp);
    const env = {
      clock: this.clock, server: this.server, ipmi, spec, logger: silentLogger(), witness,
      log: (node: string, text: string) => this.log(`${node} ${text}`),
      event: (e: KeepalivedEvent) => this.onEvent(e),
      libvirt: (name: string) => this.nodes.get(name)?.libvirt,
    };
    for (const name of spec.nodes) this.nodes.set(name, new SimNode(name, env));
    this.invariants = new Invariants(this);
  }

  /** Virtual ms since the start. */
  elapsed(): number {
    return this.clock.now() - this.start;
  }

  log(text: string): void {
    if (this.closed) return;
    this.lines.push(stamp(this.elapsed(), text.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, (id) => this.vmNames.get(id) ?? id)));
  }

  vmName(id: string): string {
    return this.vmNames.get(id) ?? id;
  }

  /** Creates the ZK tree, nodes and VMs, and powers every node on. */
  async setUp(): Promise<void> {
    const admin = await this.server.connect();
    this.admin = admin;
    for (const key of baseKeys()) await admin.create(key, key === paths.schema.version ? '15' : '');
    await admin.write([[paths.config.primaryNode, 'none'], [paths.config.maintenance, 'false'], [paths.config.migrationTargetSelector, 'mem']]);
    for (const node of this.nodes.values()) {
      const obj = newNodeObject({
        name: node.name, daemonMode: node.coordinator ? 'coordinator' : 'hypervisor', nowMs: this.clock.now(),
        staticData: '8 6.1.0 debian x86_64', pvcVersion: 'sim', ipmi: { hostname: `${node.name}-lom`, username: 'admin', password: 'sim' },
      });
      await admin.createObject(obj.root, obj.entries);
      await admin.write([[paths.node(node.name).domainState, 'ready']]);
    }
    for (const [i, vm] of this.spec.vms.entries()) {
      const uuid = `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
      this.vmNames.set(uuid, vm.name);
      const xml = `<domain type='kvm'><name>${vm.name}</name><uuid>${uuid}</uuid><memory unit='MiB'>${vm.memoryMiB}</memory><vcpu>1</vcpu></domain>`;
      const obj = newDomainObject({ uuid, name: vm.name, xml, node: vm.node, state: 'start' });
      await admin.createObject(obj.root, obj.entries);
    }
    for (const node of this.nodes.values()) node.powerOn('initial');
  }

  /** Runs the events, then `settleS` more seconds; checks invariants every step. */
  async run(events: readonly SimEvent[], settleS = this.spec.settleS): Promise<void> {
    const end = (events.at(-1)?.atMs ?? 0) + settleS * 1000;
    let next = 0;
    while (this.elapsed() <= end) {
      while (next < events.length && (events[next]?.atMs ?? Infinity) <= this.elapsed()) {
        const e = events[next++] as SimEvent;
        this.log(`event: ${e.verb} ${e.args.join(' ')}`);
        await this.apply(e);
      }
      await this.clock.advance(STEP_MS);
      this.invariants.step();
      this.onStep?.();
    }
  }

  async apply(e: SimEvent): Promise<void> {
    const [a, b] = e.args;
    const node = (name: string | undefined): SimNode => {
      const n = name === undefined ? undefined : this.nodes.get(name);
      if (!n) throw new Error(`event "${e.line}": no node ${name}`);
      return n;
    };
    if (e.verb === 'power') {
      if (b === 'off') node(a).powerOff('event');
      else node(a).powerOn('event');
    } else if (e.verb === 'network') node(a).setNetwork(b === 'on');
    else if (e.verb === 'zk-cut') node(a).setZkCut(b === 'on');
    else if (e.verb === 'ipmi') {
      node(a).ipmiReachable = b !== 'unreachable';
      node(a).ipmiRefusing = b === 'refusing';
    }
    else if (e.verb === 'ipmi-latency') node(a).ipmiLatencyMs = Number(b) * 1000;
    else if (e.verb === 'zk-expire') {
      for (const zk of node(a).sessions()) this.server.expireSession(zk);
    } else if (e.verb === 'zk') {
      this.invariants.zkUp = a !== 'down';
      if (a === 'down') this.server.stop();
      else this.server.start();
    }
    else if (e.verb === 'maintenance') await this.adminWrite([[paths.config.maintenance, a === 'on' ? 'true' : 'false']]);
    else if (e.verb === 'ready') await this.adminWrite([[paths.node(node(a).name).domainState, 'unflush']]);
    else if (e.verb === 'flush') await this.adminWrite([[paths.node(node(a).name).domainState, 'flush']]);
    else if (e.verb === 'show') await this.show(a ?? '');
    else if (e.verb === 'primary') await this.adminWrite([[paths.config.primaryNode, a ?? 'none']]);
  }

  /** `show faults`: every stored fault; `show <vm>`: the VM's keys a recovery touches; `show <node>`: its states. */
  private async show(what: string): Promise<void> {
    if (what === 'faults') {
      const ids = (await this.admin?.children(paths.faults.root).catch(() => [] as string[])) ?? [];
      if (ids.length === 0) this.log('show: no faults');
      for (const id of ids.sort()) {
        const f = paths.faults.fault(id);
        const [delta, status, message] = await Promise.all([this.read(f.delta), this.read(f.status), this.read(f.message)]);
        this.log(`show: fault ${id} (delta ${delta}, ${status}): ${message}`);
      }
      return;
    }
    if (this.nodes.has(what)) {
      const k = paths.node(what);
      const [daemon, domain] = await Promise.all([this.read(k.daemonState), this.read(k.domainState)]);
      this.log(`show: ${what} daemonstate ${daemon} domainstate ${domain}`);
      return;
    }
    const uuid = [...this.vmNames].find(([, name]) => name === what)?.[0];
    if (uuid === undefined) throw new Error(`show ${what}: no such VM or node (or "faults")`);
    const d = paths.domain(uuid);
    const [state, node, lastnode, autostart, reason] = await Promise.all([d.state, d.node, d.lastNode, d.nodeAutostart, d.failedReason].map((p) => this.read(p)));
    this.log(`show: ${what} state ${state} node ${node} lastnode "${lastnode}" node_autostart ${autostart} failedreason "${reason}"`);
  }

  private async adminWrite(pairs: [string, string][]): Promise<void> {
    await this.admin?.write(pairs).catch((err: unknown) => this.log(`admin write failed: ${String(err)}`));
  }

  /** Where each VM runs now (hypervisor truth: the domains of every node's libvirt). */
  placements(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const n of this.nodes.values()) for (const vm of n.libvirt.running()) out.set(vm, [...(out.get(vm) ?? []), n.name]);
    return out;
  }

  /** Reads a key through the admin session. */
  read(path: string): Promise<string | undefined> {
    return this.admin ? this.admin.read(path) : Promise.resolve(undefined);
  }

  /** Every VM uuid of the cluster. */
  vmIds(): string[] {
    return [...this.vmNames.keys()];
  }

  private onEvent(e: KeepalivedEvent): void {
    this.invariants.onEvent(e);
    const line = formatEvent(e, (id) => this.vmName(id));
    if (line !== undefined) this.log(line);
  }

  /** Stops everything (no timers left). */
  async tearDown(): Promise<void> {
    this.closed = true;
    for (const n of this.nodes.values()) n.powerOff('tear-down');
    await this.admin?.close();
    await this.clock.advance(10_000);
  }
}
