/**
 * Observers for cluster tests that run beside the scenario: the "no VM runs on two hosts at once"
 * invariant (every host's libvirtd polled with `virsh list --uuid`), and the Zookeeper quorum.
 */
import { realClock } from '@pvc/runtime';
import { fourLetterWord, HostPoweredOffError, parseMode, quorumFrom } from './harness/index.js';
import type { ClusterHost, ZkEnsemble, ZkServerStatus } from './harness/index.js';

/** A background loop that calls `poll()` every `everyMs` (measured from the start of each poll) until stopped. */
abstract class PollingWatch {
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(protected readonly everyMs: number) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  protected abstract poll(): Promise<void>;

  private async run(): Promise<void> {
    while (this.running) {
      const t = realClock.now();
      await this.poll();
      await realClock.sleep(Math.max(0, this.everyMs - (realClock.now() - t)));
    }
  }
}

/** Polls every powered host's running domains; records double runs and when each UUID was first seen where. */
export class DoubleRunWatch extends PollingWatch {
  readonly violations: string[] = [];
  /** `${uuid}@${host}` → first time (ms) the domain was seen running there. */
  readonly firstSeen = new Map<string, number>();
  /** The last poll's UUIDs per host (powered-off or silent hosts absent). */
  last = new Map<string, string[]>();
  polls = 0;

  constructor(private readonly hosts: readonly ClusterHost[], everyMs = 200) {
    super(everyMs);
  }

  /** Hosts on which `uuid` ran at the last poll. */
  where(uuid: string): string[] {
    return [...this.last].filter(([, us]) => us.includes(uuid)).map(([h]) => h);
  }

  private async listOn(host: ClusterHost): Promise<string[] | undefined> {
    try {
      const r = await host.virsh(['list', '--uuid'], { timeoutMs: 5_000 });
      return r.exitCode === 0 ? r.stdout.split('\n').map((l) => l.trim()).filter(Boolean) : undefined;
    } catch (err) {
      if (err instanceof HostPoweredOffError) return undefined;
      throw err;
    }
  }

  protected async poll(): Promise<void> {
    const t = realClock.now();
    // Each list is stamped when it came back: the domain was certainly running by then.
    const lists = await Promise.all(this.hosts.map(async (h) => {
      const uuids = await this.listOn(h).catch(() => undefined);
      return [h.name, uuids, realClock.now()] as const;
    }));
    const now = new Map<string, string[]>();
    const by = new Map<string, string[]>();
    for (const [host, uuids, at] of lists) {
      if (!uuids) continue;
      now.set(host, uuids);
      for (const u of uuids) {
        by.set(u, [...(by.get(u) ?? []), host]);
        if (!this.firstSeen.has(`${u}@${host}`)) this.firstSeen.set(`${u}@${host}`, at);
      }
    }
    for (const [u, hs] of by) if (hs.length > 1) this.violations.push(`${new Date(t).toISOString()} ${u} runs on ${hs.join(' and ')}`);
    this.last = now;
    this.polls++;
  }
}

/** One quorum sample: when, whether the ensemble had a leader and a serving majority, and the modes. */
export interface QuorumSample {
  at: number;
  quorum: boolean;
  modes: string;
}

/** Samples the ensemble's quorum with `srvr` (short timeout: a cut server must not slow the sampling). */
export class QuorumWatch extends PollingWatch {
  readonly samples: QuorumSample[] = [];

  constructor(private readonly zk: ZkEnsemble, everyMs = 250, private readonly timeoutMs = 1_000) {
    super(everyMs);
  }

  /** Samples taken in [from, to], plus the last one before `from` (the state the window started in). */
  between(from: number, to: number): QuorumSample[] {
    const before = this.samples.filter((s) => s.at < from).at(-1);
    return [...(before ? [before] : []), ...this.samples.filter((s) => s.at >= from && s.at <= to)];
  }

  protected async poll(): Promise<void> {
    const at = realClock.now();
    const statuses: ZkServerStatus[] = await Promise.all(
      this.zk.servers.map(async (s) => ({
        id: s.id, host: s.host, address: s.address,
        mode: await fourLetterWord(s.address, s.clientPort, 'srvr', this.timeoutMs).then(parseMode, () => 'down' as const),
      })),
    );
    this.samples.push({ at, quorum: quorumFrom(statuses), modes: statuses.map((s) => `${s.host}=${s.mode}`).join(' ') });
  }
}
