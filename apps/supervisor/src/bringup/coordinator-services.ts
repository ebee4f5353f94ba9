import type { Config } from '@pvc/config';
import { AbortedError, describeError, type Clock, type Logger } from '@pvc/runtime';
import type { Probe, SystemServices } from '../host/system-services.js';

/** One dependent service: the systemd unit that runs it and how to tell it is ready. */
export interface DependentService {
  readonly name: string;
  readonly unit: string;
  readonly probe: Probe;
}

/**
 * The services the original starts before connecting to Zookeeper (`start_system_services`):
 * Zookeeper on coordinators; Ceph mon and mgr on coordinators with storage; FRR on coordinators
 * with networking; PostgreSQL (the original's `patroni.service`) on coordinators whose
 * coordinator databases are configured; libvirtd wherever the hypervisor is enabled.
 */
export function planDependentServices(config: Config): DependentService[] {
  const out: DependentService[] = [];
  const coord = config.isCoordinator;
  // Probed at the node's own name: the address the other nodes' clients use (coordinators are listed by name).
  if (coord) out.push({ name: 'zookeeper', unit: 'zookeeper.service', probe: { kind: 'zookeeper', host: config.node, port: config.database.zookeeper.port } });
  if (config.functions.enable_hypervisor) {
    out.push({ name: 'libvirtd', unit: 'libvirtd.service', probe: { kind: 'libvirt', uri: config.system.configuration.hypervisor.libvirt_uri } });
  }
  if (coord && config.functions.enable_storage) {
    out.push({ name: 'ceph-mon', unit: `ceph-mon@${config.node}.service`, probe: { kind: 'ceph-mon' } });
    out.push({ name: 'ceph-mgr', unit: `ceph-mgr@${config.node}.service`, probe: { kind: 'ceph-mgr' } });
  }
  if (coord && config.functions.enable_networking) out.push({ name: 'frr', unit: 'frr.service', probe: { kind: 'frr' } });
  if (coord && config.coordinator !== undefined) {
    const dbs = [config.coordinator.dns.database, config.coordinator.metadata.database];
    const targets = [...new Map(dbs.map((d) => [`${d.host}:${d.port}`, { host: d.host, port: d.port }])).values()];
    out.push({ name: 'postgresql', unit: 'patroni.service', probe: { kind: 'postgresql', targets } });
  }
  return out;
}

/** Options of {@link bringUpDependentServices}. */
export interface DependentOptions {
  readonly services: SystemServices;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Only wait for the probes (something else starts the services). */
  readonly external: boolean;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** Outcome per service: ready, or not ready within the bound (logged; bring-up goes on). */
export type DependentResult = { readonly name: string; readonly ready: boolean; readonly waitedMs: number };

async function waitReady(s: DependentService, o: DependentOptions): Promise<DependentResult> {
  const start = o.clock.now();
  let pause = 50;
  let last = '';
  for (;;) {
    const r = await o.services.probe(s.probe, { signal: o.signal });
    if (r.ready) return { name: s.name, ready: true, waitedMs: o.clock.now() - start };
    last = r.detail;
    if (o.clock.now() - start >= o.timeoutMs) {
      o.logger.error({ service: s.name, unit: s.unit, waitedMs: o.clock.now() - start, last }, `${s.name} did not become ready in time`);
      return { name: s.name, ready: false, waitedMs: o.clock.now() - start };
    }
    await o.clock.sleep(pause, o.signal);
    pause = Math.min(pause * 2, 1000);
  }
}

/**
 * Starts the dependent services (unless external) and waits for each one's readiness probe in
 * parallel, polling from 50 ms up to 1 s apart, bounded by `timeoutMs` — no fixed sleep: a ready
 * service is noticed within one poll. A unit that fails to start is logged and still probed.
 */
export async function bringUpDependentServices(plan: readonly DependentService[], o: DependentOptions): Promise<DependentResult[]> {
  if (plan.length === 0) return [];
  if (!o.external) {
    for (const s of plan) {
      try {
        await o.services.start(s.unit, { signal: o.signal });
        o.logger.info({ unit: s.unit }, `started ${s.name}`);
      } catch (err) {
        if (err instanceof AbortedError) throw err;
        o.logger.error({ unit: s.unit, err: describeError(err) }, `could not start ${s.name}`);
      }
    }
  } else {
    o.logger.info({ services: plan.map((s) => s.name) }, 'external services: not starting them, only waiting for them');
  }
  const results = await Promise.all(plan.map((s) => waitReady(s, o)));
  for (const r of results) if (r.ready) o.logger.info({ service: r.name, waitedMs: r.waitedMs }, `${r.name} ready`);
  return results;
}
