import { describeError, TimeoutError, type Exec } from '@pvc/runtime';
import { VmdError } from '../errors.js';

/** Where a peer node's libvirtd and its incoming qemu are reached. */
export interface PeerAddress {
  /** libvirt URI of the target's libvirtd, e.g. `qemu+tcp://hv2/system`. */
  readonly libvirtUri: string;
  /** Migration data URI, e.g. `tcp://hv2` (qemu on the target listens on a port libvirt picks). */
  readonly migrateUri: string;
}

/**
 * The live-migration port (virsh through Exec: the libvirt binding has no migrate call). Real:
 * {@link createVirshMigrator}; unit tests use it over a FakeExec. Rejects with `VmdError`
 * `MIGRATION_FAILED` carrying virsh's message.
 */
export interface LiveMigrator {
  /** `virsh migrate-setmaxdowntime` (ms) for the domain's next/current migration. */
  setMaxDowntime(uuid: string, ms: number): Promise<void>;
  /** Live-migrates the (transient) domain; resolves when libvirt reports success. */
  migrateLive(uuid: string, peer: PeerAddress, timeoutMs: number): Promise<void>;
  /** Aborts a running migration job (best effort). */
  abortJob(uuid: string): Promise<void>;
}

/**
 * virsh-backed {@link LiveMigrator} on the local libvirt URI. `migrate --live` keeps the domain
 * transient on the target (no `--persistent`), as PVC's VMs are; `--timeout` makes a guest that
 * does not converge pause for the rest of the copy (bounded downtime instead of an endless job).
 * When virsh itself overruns `timeoutMs` the job is aborted, so nothing keeps migrating behind us.
 */
export function createVirshMigrator(exec: Exec, localUri: string): LiveMigrator {
  const virsh = async (args: string[], timeoutMs: number): Promise<void> => {
    const r = await exec.run('virsh', ['-c', localUri, ...args], { timeoutMs });
    if (r.exitCode !== 0) {
      const msg = (r.stderr.trim() || r.stdout.trim() || `exit ${r.exitCode}`).replace(/^error:\s*/gm, '').replace(/\n+/g, '; ');
      throw new VmdError('MIGRATION_FAILED', `virsh ${args[0] ?? ''}: ${msg}`);
    }
  };
  return {
    setMaxDowntime: (uuid, ms) => virsh(['migrate-setmaxdowntime', uuid, '--downtime', String(ms)], 30_000),
    async migrateLive(uuid, peer, timeoutMs) {
      const suspendAfterS = Math.max(1, Math.floor(timeoutMs / 2000));
      try {
        await virsh(['migrate', '--live', '--timeout', String(suspendAfterS), uuid, peer.libvirtUri, peer.migrateUri], timeoutMs);
      } catch (err) {
        if (!(err instanceof TimeoutError)) throw err;
        await virsh(['domjobabort', uuid], 30_000).catch(() => undefined);
        throw new VmdError('MIGRATION_FAILED', `virsh migrate: ${describeError(err)} (job aborted)`, { cause: err });
      }
    },
    abortJob: (uuid) => virsh(['domjobabort', uuid], 30_000),
  };
}

/**
 * The peer address of `target`: when the local `libvirt_uri` names this node (`qemu+tcp://hv1/system`)
 * the target's name replaces it; otherwise `qemu+tcp://<target>/system`. The migration stream goes
 * to `tcp://<target>`. Node names must resolve to cluster addresses (DNS or /etc/hosts), as the
 * original's `<target>.<cluster_domain>` did.
 */
export function peerAddress(localUri: string, self: string, target: string): PeerAddress {
  const m = /^([a-z+]+):\/\/([^/:]+)(:\d+)?(\/.*)$/.exec(localUri);
  const libvirtUri = m && m[2] === self && m[1]!.includes('+') ? `${m[1]}://${target}${m[3] ?? ''}${m[4]}` : `qemu+tcp://${target}/system`;
  return { libvirtUri, migrateUri: `tcp://${target}` };
}
