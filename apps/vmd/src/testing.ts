import { captureLogger as captureRuntimeLogger, VirtualClock, type Logger } from '@pvc/runtime';
import { newDomainObject, newNodeObject, paths, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { FakeHypervisor } from './host/fake-hypervisor.js';
import { Reconciler } from './reconciler.js';
import { BRIDGE_WAIT_MS, type HostBridges } from './host/bridges.js';

/** A guest XML as the tests store it (the fake and libvirt both accept it). */
export function testXml(name: string, uuid: string | undefined, memoryMiB = 128, type = 'qemu'): string {
  return `<domain type='${type}'><name>${name}</name>${uuid ? `<uuid>${uuid}</uuid>` : ''}<memory unit='MiB'>${memoryMiB}</memory><vcpu>2</vcpu></domain>`;
}

/** A logger whose JSON lines are kept in `lines` (service vmd, node hv1). */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  return captureRuntimeLogger('vmd');
}

/** One vmd (reconciler) on hv1 against a fake ZK and a fake libvirt, in virtual time. */
export async function unitRig(opts: { acpiShutdownMs?: number; createLatencyMs?: number; startConcurrency?: number; bridges?: HostBridges } = {}) {
  const clock = new VirtualClock(1_700_000_000_000);
  const server = new FakeZkServer({ clock });
  const admin = await server.connect();
  for (const p of [paths.nodes, paths.domains]) await admin.ensurePath(p);
  for (const name of ['hv1', 'hv2']) {
    const n = newNodeObject({ name, daemonMode: 'hypervisor', nowMs: clock.now(), staticData: '2 6.1 debian x86_64', pvcVersion: '0', ipmi: { hostname: '', username: '', password: '' } });
    await admin.createObject(n.root, n.entries);
    await admin.write([[paths.node(name).domainState, 'ready'], [paths.node(name).daemonState, 'run']]);
  }
  const hv = new FakeHypervisor({ clock, acpiShutdownMs: opts.acpiShutdownMs, createLatencyMs: opts.createLatencyMs });
  const { logger, lines } = captureLogger();
  const ac = new AbortController();
  const running: Promise<void>[] = [];
  const zks: ZkClient[] = [];
  const startVmd = async (): Promise<Reconciler> => {
    const zk = await server.connect();
    zks.push(zk);
    const r = new Reconciler({ zk, hv, clock, logger, node: 'hv1', domainType: 'qemu', shutdownTimeoutMs: 10_000, resyncMs: 2000, statsIntervalMs: 5000, startConcurrency: opts.startConcurrency,
      bridges: opts.bridges && { port: opts.bridges, boundMs: BRIDGE_WAIT_MS, node: 'hv1' } });
    running.push(r.run(ac.signal));
    return r;
  };
  const define = async (uuid: string, name: string, state: string, node = 'hv1', xml = testXml(name, uuid)): Promise<void> => {
    const d = newDomainObject({ uuid, name, xml, node, state });
    await admin.createObject(d.root, d.entries);
  };
  const settle = (ms = 3000): Promise<void> => clock.advance(ms);
  const stop = async (): Promise<void> => {
    ac.abort();
    await clock.advance(10);
    await Promise.all(running);
    for (const z of zks) await z.close();
    await admin.close();
  };
  return { clock, server, admin, hv, logger, lines, startVmd, define, settle, stop };
}
