import { parseConfig, type Config } from '@pvc/config';
import { mutate } from '@pvc/config/testing';
import { FakeLinks, FakeSysctl } from '@pvc/hostnet';
import { FakeIpmi } from '@pvc/ipmi';
import { createLogger, FakeExec, VirtualClock, type Logger } from '@pvc/runtime';
import { ZkError, type ZkClient } from '@pvc/zk';
import { FakeZkServer } from '@pvc/zk/testing';
import { dump } from 'js-yaml';
import { DEFAULT_RESTART_POLICY } from './children/backoff.js';
import { CHILD_SERVICES } from './children/group.js';
import { FakeDatabaseAdmin } from './host/fake-database-admin.js';
import { FakeProcessPort } from './host/fake-process.js';
import type { SocketHold, SocketHolders } from './host/socket-holders.js';
import type { Probe, ProbeResult, SystemServices } from './host/system-services.js';
import type { RunOptions } from './options.js';
import { SupervisorStatus } from './status.js';
import type { SupervisorDeps } from './supervisor.js';

/** A config from the sample with edits (directories are only recorded by the fake port). */
export function testConfig(...edits: [string, unknown][]): Config {
  return parseConfig(dump(mutate(
    ...edits,
  )), 'test.yaml');
}

/** Fake SystemServices: records starts; each probe kind is ready from `readyAt[kind]` (virtual ms). */
export class FakeServices implements SystemServices {
  readonly started: string[] = [];
  readonly probes: string[] = [];
  readonly readyAt: Record<string, number> = {};
  constructor(private readonly clock: VirtualClock) {}
  async start(unit: string): Promise<void> {
    this.started.push(unit);
  }
  async probe(p: Probe): Promise<ProbeResult> {
    this.probes.push(p.kind);
    const at = this.readyAt[p.kind] ?? 0;
    return this.clock.now() >= at ? { ready: true, detail: 'ok' } : { ready: false, detail: 'not yet' };
  }
}

/** Fake SocketHolders: a path is held by the pids in `held` until the test deletes it. */
export class FakeSocketHolders implements SocketHolders {
  readonly held = new Map<string, number[]>();
  readonly looks: string[] = [];
  async holders(path: string): Promise<SocketHold | undefined> {
    this.looks.push(path);
    const pids = this.held.get(path);
    return pids ? { pids } : undefined;
  }
}

/** Everything faked, plus handles on the fakes. */
export function fakeWorld(config: Config, options: Partial<RunOptions> = {}) {
  const clock = new VirtualClock(1_700_000_000_000);
  const zkServer = new FakeZkServer({ clock });
  const lines: Record<string, unknown>[] = [];
  const logger: Logger = createLogger({ service: 'supervisor', dates: false, debug: true, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
  const exec = new FakeExec();
  const services = new FakeServices(clock);
  const sysctl = new FakeSysctl();
  // The sample's devices (everything on ens4), down: bring-up makes brcluster and its addresses.
  const links = new FakeLinks().addDevice('ens4');
  const processes = new FakeProcessPort();
  const socketHolders = new FakeSocketHolders();
  const ipmi = new FakeIpmi(clock);
  const databases = new FakeDatabaseAdmin();
  const status = new SupervisorStatus();
  const shutdown = new AbortController();
  let requestShutdown: (r: string) => void = () => undefined;
  const shutdownRequested = new Promise<string>((r) => (requestShutdown = (reason) => (shutdown.abort(new Error(reason)), r(reason))));
  const dirs: string[] = [];
  const zk = { reachable: true, connects: 0, clients: [] as ZkClient[] };
  let notified = 0;
  const deps: SupervisorDeps = {
    config,
    options: { mode: 'standalone', externalServices: false, systemctl: 'systemctl', zkTimeoutMs: 60_000, serviceTimeoutMs: 120_000, ...options },
    logger,
    clock,
    sysctl,
    links,
    makeDirectory: async (d) => (dirs.push(d.path), true),
    services,
    connectZk: async (timeoutMs, signal) => {
      zk.connects++;
      if (!zk.reachable) {
        await clock.sleep(timeoutMs, signal);
        throw new ZkError('OPERATION_TIMEOUT', `no Zookeeper session within ${timeoutMs} ms`);
      }
      const c = await zkServer.connect();
      zk.clients.push(c);
      return c;
    },
    hostFacts: async () => ({ cpuCount: 4, kernel: '6.1.0-test', os: 'GNU/Linux', arch: 'x86_64' }),
    pvcVersion: '0.1.0',
    retryPauseMs: 2_000,
    signal: shutdown.signal,
    exec,
    ipmi,
    databases,
    processes,
    childSpecs: CHILD_SERVICES.map((name) => ({ name, command: 'node', args: [`${name}.js`] })),
    policy: DEFAULT_RESTART_POLICY,
    socketHolders,
    status,
    notifyReady: async () => (notified++, true),
    shutdownRequested,
  };
  return { deps, dirs, clock, zkServer, lines, exec, services, sysctl, links, processes, socketHolders, ipmi, databases, status, zk, requestShutdown, notified: () => notified };
}
