/**
 * Host bridges a VM's interfaces attach to (issue 12 item 5): before vmd creates a domain, every
 * `<interface type='bridge'>` source must exist on this node — `vmbr<vni>` is made by netd when a
 * client network is added, and a start that raced ahead of it would fail inside libvirt with a
 * message naming no network. The real adapter asks `ip` through the Exec port; the fake is a set.
 *
 * @module
 */
import { describeError, type Clock, type Exec } from '@pvc/runtime';
import { VmdError } from '../errors.js';

/**
 * How long a start waits for the bridges its VM's interfaces name (netd makes `vmbr<vni>` when a
 * network is added) before the VM fails naming the missing one.
 */
export const BRIDGE_WAIT_MS = 10_000;

/** Does a network device exist on this node. */
export interface HostBridges {
  /** True when a device named `name` exists; throws (LIBVIRT_ERROR is not involved) when `ip` cannot be run. */
  exists(name: string): Promise<boolean>;
}

/** Options of {@link createIpBridges}. */
export interface IpBridgesOptions {
  exec: Exec;
  /** Command line before `ip` (tests: `['ip', 'netns', 'exec', '<ns>']`). */
  prefix?: readonly string[];
  /** Deadline of one call, ms (default 5000). */
  timeoutMs?: number;
}

/** The real {@link HostBridges}: `ip -json link show dev <name>`. */
export function createIpBridges(o: IpBridgesOptions): HostBridges {
  return {
    async exists(name) {
      const [command, ...pre] = [...(o.prefix ?? []), 'ip'];
      const r = await o.exec.run(command!, [...pre, '-json', 'link', 'show', 'dev', name], { timeoutMs: o.timeoutMs ?? 5_000 });
      if (r.exitCode === 0) return true;
      if (/does not exist|Cannot find device/i.test(r.stderr)) return false;
      throw new Error(`ip link show dev ${name}: ${r.stderr.trim() || `exit status ${r.exitCode}`}`);
    },
  };
}

/** The fake {@link HostBridges}: the devices in `names`; `down` makes every call fail. */
export class FakeBridges implements HostBridges {
  readonly names: Set<string>;
  down = false;
  constructor(names: Iterable<string> = []) {
    this.names = new Set(names);
  }
  exists(name: string): Promise<boolean> {
    return Promise.resolve().then(() => {
      if (this.down) throw new Error(`ip link show dev ${name}: ip not available (fake down)`);
      return this.names.has(name);
    });
  }
}

/** What a missing bridge is, in words: `vmbr<vni>` belongs to client network `<vni>`. */
export function describeBridge(name: string): string {
  const vni = /^vmbr(\d+)$/.exec(name)?.[1];
  return vni === undefined ? `bridge ${name}` : `bridge ${name} of network ${vni}`;
}

/** Options of {@link waitForBridges}. */
export interface BridgeWaitOptions {
  clock: Clock;
  /** Give up after this long, ms. */
  boundMs: number;
  /** Between two looks, ms (default 250). */
  everyMs?: number;
  /** This node's name, for the message. */
  node: string;
  signal?: AbortSignal;
}

/**
 * Resolves once every bridge in `names` exists; a bridge still missing after `boundMs` (or a
 * check that keeps failing) rejects with a VmdError `MISSING_BRIDGE` naming it and its network:
 * the start fails with that as `failedreason`.
 */
export async function waitForBridges(port: HostBridges, names: readonly string[], o: BridgeWaitOptions): Promise<void> {
  if (names.length === 0) return;
  const deadline = o.clock.now() + o.boundMs;
  let missing: string[] = [...names];
  let lastError: string | undefined;
  for (;;) {
    const still: string[] = [];
    lastError = undefined;
    for (const n of missing) {
      try {
        if (!(await port.exists(n))) still.push(n);
      } catch (err) {
        lastError = describeError(err);
        still.push(n);
      }
    }
    missing = still;
    if (missing.length === 0) return;
    if (o.clock.now() >= deadline) break;
    await o.clock.sleep(Math.min(o.everyMs ?? 250, Math.max(1, deadline - o.clock.now())), o.signal);
  }
  const what = missing.map(describeBridge).join(', ');
  const why = lastError === undefined ? '' : ` (last check failed: ${lastError})`;
  throw new VmdError('MISSING_BRIDGE', `${what} does not exist on ${o.node} after ${Math.round(o.boundMs / 1000)} s${why}`);
}
