/**
 * Observers for cluster tests that run beside the scenario: the "no VM runs on two hosts at once"
 * invariant (every host's libvirtd polled with `virsh list --uuid --state-running`; active domains
 * on two hosts recorded apart), the "no floating address on two hosts at once" invariant (every
 * host's addresses), and the Zookeeper quorum.
 */
import { readFileSync } from 'node:fs';
import { createExec, realClock } from '@pvc/runtime';
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

/**
 * Polls every powered host's domains (`virsh list --uuid --state-running` and `virsh list --uuid`,
 * side by side). A UUID in state running on two hosts in one poll is then confirmed by a sandwich —
 * list host A, then B, then A again, one after the other: running on A before and after B saw it
 * running means both ran at the moment of B's answer (A, B and A again in both orders). Only a
 * confirmed one is a double run (`violations`); parallel lists taken at slightly different moments
 * straddle a live migration's switch-over (source paused → target resumed) and are kept apart in
 * `unconfirmed`. A UUID merely active on two hosts is recorded in `activeOnTwo` (for information):
 * inside a live migration the target's incoming domain is active and paused.
 */
export class DoubleRunWatch extends PollingWatch {
  /** Samples with a UUID in state running on two hosts. */
  readonly violations: string[] = [];
  /** Samples with a UUID active (running, paused, …) on two hosts: expected inside a live migration. */
  readonly activeOnTwo: string[] = [];
  /** Running on two hosts in one parallel poll, but not confirmed by the sandwich check. */
  readonly unconfirmed: string[] = [];
  /** `${uuid}@${host}` → first time (ms) the domain was seen running there. */
  readonly firstSeen = new Map<string, number>();
  /** The last poll's running UUIDs per host (powered-off or silent hosts absent). */
  last = new Map<string, string[]>();
  polls = 0;

  constructor(private readonly hosts: readonly ClusterHost[], everyMs = 200) {
    super(everyMs);
  }

  private async confirm(uuid: string, names: readonly string[]): Promise<string[] | undefined> {
    const hosts = this.hosts.filter((h) => names.includes(h.name));
    const list = (h: ClusterHost): Promise<string[] | undefined> => this.listOn(h, true);
    for (const [i, a] of hosts.entries()) {
      for (const b of hosts.slice(i + 1)) {
        if ((await sandwich(list, a, b, uuid)) || (await sandwich(list, b, a, uuid))) return [a.name, b.name];
      }
    }
    return undefined;
  }

  /** Hosts on which `uuid` was running at the last poll. */
  where(uuid: string): string[] {
    return [...this.last].filter(([, us]) => us.includes(uuid)).map(([h]) => h);
  }

  private async listOn(host: ClusterHost, runningOnly: boolean): Promise<string[] | undefined> {
    try {
      const r = await host.virsh(['list', '--uuid', ...(runningOnly ? ['--state-running'] : [])], { timeoutMs: 5_000 });
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
      const [running, active] = await Promise.all([
        this.listOn(h, true).catch(() => undefined), this.listOn(h, false).catch(() => undefined),
      ]);
      return [h.name, running, active, realClock.now()] as const;
    }));
    const now = new Map<string, string[]>();
    for (const [host, uuids, , at] of lists) {
      if (!uuids) continue;
      now.set(host, uuids);
      for (const u of uuids) if (!this.firstSeen.has(`${u}@${host}`)) this.firstSeen.set(`${u}@${host}`, at);
    }
    const stamp = new Date(t).toISOString();
    for (const [u, hs] of onTwo(lists.map(([h, r]) => [h, r] as const))) {
      const confirmed = await this.confirm(u, hs);
      (confirmed ? this.violations : this.unconfirmed).push(`${stamp} ${u} runs on ${(confirmed ?? hs).join(' and ')}`);
    }
    for (const [u, hs] of onTwo(lists.map(([h, , a]) => [h, a] as const))) this.activeOnTwo.push(`${stamp} ${u} active on ${hs.join(' and ')}`);
    this.last = now;
    this.polls++;
  }
}

/** The sandwich check: `uuid` running on `a`, then on `b`, then on `a` again, listed one after the other. */
async function sandwich(list: (h: ClusterHost) => Promise<string[] | undefined>, a: ClusterHost, b: ClusterHost, uuid: string): Promise<boolean> {
  const has = async (h: ClusterHost): Promise<boolean> => ((await list(h).catch(() => undefined)) ?? []).includes(uuid);
  return (await has(a)) && (await has(b)) && (await has(a));
}

/** UUIDs listed by more than one host, with those hosts. */
function onTwo(lists: readonly (readonly [string, readonly string[] | undefined])[]): [string, string[]][] {
  const by = new Map<string, string[]>();
  for (const [host, uuids] of lists) for (const u of uuids ?? []) by.set(u, [...(by.get(u) ?? []), host]);
  return [...by].filter(([, hs]) => hs.length > 1);
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

/** One host's IPv4 addresses as one read saw them: address → interface. */
type HostAddresses = Map<string, string>;

/** Parses `ip -j -4 address show`: every local IPv4 address with its interface. */
export function parseIpAddresses(json: string): HostAddresses {
  const out: HostAddresses = new Map();
  const links = JSON.parse(json || '[]') as { ifname?: string; addr_info?: { family?: string; local?: string }[] }[];
  for (const l of links) for (const a of l.addr_info ?? []) if (a.local && (a.family ?? 'inet') === 'inet') out.set(a.local, l.ifname ?? '?');
  return out;
}

/** The order {@link FloatingAddressWatch} reads hosts in: all, then all but the last again (every pair gets a sandwich). */
export function sandwichOrder<T>(hosts: readonly T[]): T[] {
  return hosts.length < 2 ? [...hosts] : [...hosts, ...hosts.slice(0, -1)];
}

/**
 * Whether `ip` was held by one host, then by another, then by the first again in `reads` (in the
 * order they were taken): both held it at the moment of the middle read. Returns the pair or undefined.
 */
export function sandwiched(reads: readonly { host: string; addrs: HostAddresses | undefined }[], ip: string): [string, string] | undefined {
  const holders = reads.map((r) => (r.addrs?.has(ip) ? r.host : undefined));
  for (let i = 0; i < holders.length; i++) {
    const a = holders[i];
    if (a === undefined) continue;
    for (let j = i + 1; j < holders.length; j++) {
      const b = holders[j];
      if (b === undefined || b === a) continue;
      if (holders.slice(j + 1).includes(a)) return [a, b];
    }
  }
  return undefined;
}

/**
 * The "two hosts never answer for the same floating address" invariant (issue 11): every `everyMs`
 * one shell reads each host's IPv4 addresses (`ip -n <netns> -j -4 address show`, from the root
 * namespace: a powered-off host's namespace is read too) one after the other, in
 * {@link sandwichOrder}, so for every pair of hosts there is a read of A, then B, then A again. A
 * floating address held by A at the first and third read and by B in between was on both at once:
 * a `violation`. Two holders in the first pass that no sandwich confirms (a handover between the
 * reads) are kept apart in `unconfirmed`. `last` is each floating address's holders at the last
 * poll, `changes` every change of holders (with the interface), for timelines and the start-up check.
 */
export class FloatingAddressWatch extends PollingWatch {
  readonly violations: string[] = [];
  readonly unconfirmed: string[] = [];
  /** Polls whose shell failed (e.g. a namespace already gone), with the message. */
  readonly errors: string[] = [];
  /** Floating address → hosts holding it at the last poll (first pass), each as `host/interface`. */
  last = new Map<string, string[]>();
  readonly changes: { at: number; ip: string; holders: string[] }[] = [];
  polls = 0;
  private readonly exec = createExec();

  constructor(private readonly hosts: readonly Pick<ClusterHost, 'name' | 'netns'>[], readonly floating: readonly string[], everyMs = 200) {
    super(everyMs);
  }

  /** Reads every host once (in `hosts` order): the holders of each floating address as `host/interface`. */
  async holders(): Promise<Map<string, string[]>> {
    const reads = await this.read(this.hosts);
    return this.holdersOf(reads);
  }

  /** Fails listing every confirmed double holding (call at the end of a test). */
  assertNone(): void {
    if (this.violations.length > 0) {
      throw new Error(`a floating address was on two hosts at once (${this.violations.length} poll(s)):\n  ${this.violations.slice(0, 20).join('\n  ')}`);
    }
  }

  private holdersOf(reads: readonly { host: string; addrs: HostAddresses | undefined }[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const ip of this.floating) {
      out.set(ip, reads.flatMap((r) => (r.addrs?.has(ip) ? [`${r.host}/${r.addrs.get(ip)!}`] : [])));
    }
    return out;
  }

  private async read(hosts: readonly Pick<ClusterHost, 'name' | 'netns'>[]): Promise<{ host: string; addrs: HostAddresses | undefined }[]> {
    const script = 'for ns in "$@"; do echo "@@ $ns"; ip -n "$ns" -j -4 address show 2>/dev/null || echo "@@ failed"; done';
    const r = await this.exec.run('bash', ['-c', script, 'floating', ...hosts.map((h) => h.netns)], { timeoutMs: 5_000 });
    if (r.exitCode !== 0) throw new Error(`reading the hosts' addresses: exit ${r.exitCode} ${r.stderr.trim()}`);
    const blocks = r.stdout.split(/^@@ /m).slice(1);
    return hosts.map((h, i) => {
      const body = (blocks[i] ?? '').split('\n').slice(1).join('\n').trim();
      if (!body || body.startsWith('@@ failed')) return { host: h.name, addrs: undefined };
      try {
        return { host: h.name, addrs: parseIpAddresses(body) };
      } catch {
        return { host: h.name, addrs: undefined };
      }
    });
  }

  protected async poll(): Promise<void> {
    const t = realClock.now();
    let reads: { host: string; addrs: HostAddresses | undefined }[];
    try {
      reads = await this.read(sandwichOrder(this.hosts));
    } catch (err) {
      this.errors.push(`${new Date(t).toISOString()} ${(err as Error).message}`);
      return;
    }
    const stamp = new Date(t).toISOString();
    const first = reads.slice(0, this.hosts.length);
    const now = this.holdersOf(first);
    for (const ip of this.floating) {
      const pair = sandwiched(reads, ip);
      if (pair) this.violations.push(`${stamp} ${ip} on ${pair[0]} and ${pair[1]}`);
      else if (now.get(ip)!.length > 1) this.unconfirmed.push(`${stamp} ${ip} on ${now.get(ip)!.join(' and ')} (not confirmed)`);
      const before = this.last.get(ip) ?? [];
      const after = now.get(ip)!;
      if (before.join() !== after.join()) this.changes.push({ at: t, ip, holders: after });
    }
    this.last = now;
    this.polls++;
  }
}

/** One QEMU process seen with an RBD image open. */
export interface ImageOpener {
  host: string;
  pid: string;
}

/**
 * "At no moment do two QEMU processes hold an RBD image open": polls every host's processes (`ip
 * netns pids <host netns>`, then each one's /proc cmdline) for a QEMU whose command line opens
 * `<pool>/<image>` through librbd (libvirt 9 passes `-blockdev {"driver":"rbd","pool":…,"image":…}`).
 * A QEMU is there from before the image is opened until after it is closed, so a process count of
 * one per poll is a safe upper bound on writers; a powered-off host's processes are gone (SIGKILL).
 * Polls in which two live QEMUs had it are `violations`.
 */
export class ImageOpenWatch extends PollingWatch {
  readonly violations: string[] = [];
  /** Every (host, pid) ever seen with the image, in order of first sight. */
  readonly seen: ImageOpener[] = [];
  polls = 0;
  private readonly exec = createExec();
  private readonly needles: string[];

  constructor(private readonly hosts: readonly ClusterHost[], pool: string, image: string, everyMs = 200) {
    super(everyMs);
    this.needles = ['"driver":"rbd"', `"pool":"${pool}"`, `"image":"${image}"`];
  }

  /** The QEMUs that have the image open now. */
  async openers(): Promise<ImageOpener[]> {
    const found = await Promise.all(this.hosts.map(async (h) => {
      const r = await this.exec.run('ip', ['netns', 'pids', h.netns]).catch(() => undefined);
      const pids = (r?.stdout ?? '').split('\n').map((s) => s.trim()).filter(Boolean);
      return pids.filter((pid) => this.opens(pid)).map((pid) => ({ host: h.name, pid }));
    }));
    return found.flat();
  }

  protected async poll(): Promise<void> {
    const now = await this.openers();
    this.polls += 1;
    for (const o of now) if (!this.seen.some((s) => s.host === o.host && s.pid === o.pid)) this.seen.push(o);
    if (now.length > 1) this.violations.push(`${new Date(realClock.now()).toISOString()}: ${now.map((o) => `${o.host} pid ${o.pid}`).join(', ')}`);
  }

  private opens(pid: string): boolean {
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return false; // gone meanwhile
    }
    return cmd.includes('qemu-system') && this.needles.every((n) => cmd.includes(n));
  }
}
