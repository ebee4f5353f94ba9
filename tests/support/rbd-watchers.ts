/**
 * Who has an RBD image open: `rbd status --format json <image>` lists one watcher per client that
 * opened it (every QEMU with the image as a disk, `rbd map`, a running `rbd` tool), by address.
 * A killed client's watch stays (the OSD's watch timeout is 30 s by default) until the client is
 * blocklisted, as `rbd lock remove` does: in tests/integration/vmd/rbd-disk.test.ts a SIGKILLed
 * QEMU's watch was still listed before cephd's FORCE flush and gone ~0.2 s after it began. Tests
 * use it to check that no two QEMUs on different
 * hosts have a VM's disk open, outside a live migration. The runner is the caller's (`rbd` in the
 * right namespace with the right conf), so the helper works in every tier.
 */

/** One client with the image open. */
export interface RbdWatcher {
  /** `ip:port/nonce` as Ceph prints it. */
  address: string;
  /** `client.<id>` number. */
  client: number;
}

/** Runs `rbd <args>` and resolves with its stdout; rejects on failure. */
export type RbdRunner = (args: readonly string[]) => Promise<string>;

/** The watchers of `image` (`pool/volume`). Rejects, naming the image and the output, on unexpected JSON. */
export async function rbdWatchers(run: RbdRunner, image: string): Promise<RbdWatcher[]> {
  const out = await run(['status', '--format', 'json', image]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(out);
  } catch {
    throw new Error(`rbd status ${image}: not JSON: ${out.slice(0, 200)}`);
  }
  const list = (parsed as { watchers?: unknown }).watchers;
  if (!Array.isArray(list)) throw new Error(`rbd status ${image}: no "watchers" list in ${out.slice(0, 200)}`);
  return list.map((w: { address?: unknown; client?: unknown }) => {
    if (typeof w.address !== 'string' || typeof w.client !== 'number') throw new Error(`rbd status ${image}: malformed watcher ${JSON.stringify(w)}`);
    return { address: w.address, client: w.client };
  });
}

/** The IP of a Ceph address (`10.254.0.1:0/123` → `10.254.0.1`; `v2:` prefixes and `[…]` brackets dropped). */
export function watcherIp(address: string): string {
  return address.replace(/^v[12]:/, '').replace(/^\[([^\]]+)\].*$/, '$1').replace(/:\d+\/\d+$/, '').replace(/:\d+$/, '');
}
