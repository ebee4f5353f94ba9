// A throw-away "host" for libs/hostnet's real adapter: a network namespace whose devices are veth
// ends, the other end of each in a second "segment" namespace where other hosts' addresses live.
// Root only. Namespaces are named after this process; ones left by a dead test process are removed
// when the next one starts.
import assert from 'node:assert/strict';
import { createExec, type Exec } from '@pvc/runtime';

const host = createExec();
const PREFIX = 'pvc-hn-';
let counter = 0;

async function must(args: string[]): Promise<string> {
  const r = await host.run('ip', args, { timeoutMs: 10_000 });
  assert.equal(r.exitCode, 0, `ip ${args.join(' ')}: ${r.stderr.trim()} (these tests need root and iproute2)`);
  return r.stdout;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes namespaces of this suite whose test process is gone (a crash, a SIGKILL). */
export async function sweepStaleNamespaces(): Promise<void> {
  for (const line of (await must(['netns', 'list'])).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const pid = Number(/^pvc-hn-(\d+)-/.exec(name)?.[1]);
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && pid !== process.pid && !alive(pid)) await host.run('ip', ['netns', 'delete', name]);
  }
}

/** One simulated host and the segment its devices are plugged into. */
export class TestHost {
  readonly exec: Exec;
  private readonly peerOf = new Map<string, string>();
  private constructor(readonly ns: string, readonly segment: string) {
    this.exec = {
      run: (cmd, args, opts) => host.run('ip', ['netns', 'exec', ns, cmd, ...args], opts),
      spawn: (cmd, args, opts) => host.spawn('ip', ['netns', 'exec', ns, cmd, ...args], opts),
    };
  }

  static async create(): Promise<TestHost> {
    const n = ++counter;
    const h = new TestHost(`${PREFIX}${process.pid}-${n}`, `${PREFIX}${process.pid}-${n}-seg`);
    try {
      await must(['netns', 'add', h.ns]);
      await must(['netns', 'add', h.segment]);
      await must(['-n', h.ns, 'link', 'set', 'lo', 'up']);
    } catch (err) {
      await h.destroy();
      throw err;
    }
    return h;
  }

  /** A device `name` (down, MTU 1500) whose other end is up in the segment namespace. */
  async addDevice(name: string): Promise<void> {
    const peer = `p${this.peerOf.size}`;
    await must(['-n', this.ns, 'link', 'add', name, 'type', 'veth', 'peer', 'name', peer, 'netns', this.segment]);
    await must(['-n', this.segment, 'link', 'set', peer, 'up']);
    this.peerOf.set(name, peer);
  }

  /** Another host on the segment of `device` holds `cidr`. */
  async addPeer(device: string, cidr: string): Promise<void> {
    const peer = this.peerOf.get(device);
    assert.ok(peer, `no device ${device} made by addDevice`);
    await must(['-n', this.segment, 'address', 'add', cidr, 'dev', peer]);
  }

  /** Runs `ip <args>` in the host namespace and returns its stdout (fails the test on error). */
  ip(args: string[]): Promise<string> {
    return must(['-n', this.ns, ...args]);
  }

  /** Deletes both namespaces (and with them every device in them); safe to call twice. */
  async destroy(): Promise<void> {
    await host.run('ip', ['netns', 'delete', this.ns]);
    await host.run('ip', ['netns', 'delete', this.segment]);
  }
}
