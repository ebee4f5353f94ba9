/**
 * Pool requests as plans (pure): add, remove, set-pgs — the original's commands (inventory §8).
 *
 * @module
 */
import { poolKeys, snapshotPoolKeys, volumePoolKeys, type StorageRequest } from '@pvc/zk';
import { change, refuse, type CephCommand, type Planned, type PlanStep, type StorageView } from './plan-types.js';
import { volumeRemovalSteps } from './plan-volume.js';

type Req<O extends StorageRequest['op']> = Extract<StorageRequest, { op: O }>;

const ceph = (...args: string[]): CephCommand => ({ tool: 'ceph', args });

/** Removes pool `p` (the undo of a create, and the last removal step). */
export function poolRm(p: string): CephCommand {
  return ceph('osd', 'pool', 'rm', p, p, '--yes-i-really-really-mean-it');
}

/** The Zookeeper trees of a pool: its object and its volume and snapshot parents. */
function poolTrees(p: string): string[] {
  return [poolKeys(p).root.path, volumePoolKeys(p).root.path, snapshotPoolKeys(p).root.path];
}

/** The CRUSH rule of a tier: `replicated_rule` (default) or `<tier>_tier`. */
export function tierRule(tier: string): string {
  return tier === 'default' ? 'replicated_rule' : `${tier}_tier`;
}

/**
 * `pool add`: the tier's rule (created when missing, removed again on failure), `osd pool create
 * <p> <pgs> <pgs> <rule>`, `set size`, `set min_size`, `application enable rbd`; then the pool
 * object (root, pgs, tier, stats `{}`) with `/ceph/volumes/<p>` and `/ceph/snapshots/<p>`. Any
 * failure after the create removes the pool.
 */
export function planPoolAdd(r: Req<'pool.add'>, view: StorageView): Planned {
  if (view.pool) return refuse(`pool "${r.pool}" already exists`);
  if (view.cephHasPool) return refuse(`Ceph already has a pool "${r.pool}" that PVC does not manage; pick another name`);
  const rule = tierRule(r.tier);
  const steps: PlanStep[] = [];
  if (r.tier !== 'default' && !(view.crushRules ?? []).includes(rule)) {
    steps.push({
      what: `creating CRUSH rule ${rule}`,
      run: ceph('osd', 'crush', 'rule', 'create-replicated', rule, 'default', 'host', r.tier),
      undo: { what: `CRUSH rule ${rule} removed`, run: ceph('osd', 'crush', 'rule', 'rm', rule) },
    });
  }
  const pgs = String(r.pgs);
  steps.push(
    { what: `creating pool "${r.pool}"`, run: ceph('osd', 'pool', 'create', r.pool, pgs, pgs, rule), undo: { what: `pool "${r.pool}" removed`, run: poolRm(r.pool) } },
    { what: `setting size ${r.copies} of pool "${r.pool}"`, run: ceph('osd', 'pool', 'set', r.pool, 'size', String(r.copies)) },
    { what: `setting min_size ${r.minCopies} of pool "${r.pool}"`, run: ceph('osd', 'pool', 'set', r.pool, 'min_size', String(r.minCopies)) },
    { what: `enabling rbd on pool "${r.pool}"`, run: ceph('osd', 'pool', 'application', 'enable', r.pool, 'rbd') },
  );
  const k = poolKeys(r.pool);
  return {
    kind: 'plan',
    plan: {
      steps,
      reads: [],
      change: () => change({
        // Parents a removal left behind (never a live pool's: the pool object is not there).
        deleteTrees: [volumePoolKeys(r.pool).root.path, snapshotPoolKeys(r.pool).root.path],
        create: [
          [k.root.path, ''], [k.pgs.path, k.pgs.codec.encode(r.pgs)], [k.tier.path, k.tier.codec.encode(r.tier)], [k.stats.path, '{}'],
          [volumePoolKeys(r.pool).root.path, ''], [snapshotPoolKeys(r.pool).root.path, ''],
        ],
      }),
      done: `Created RBD pool "${r.pool}" with ${r.pgs} PGs`,
    },
  };
}

/**
 * `pool remove`: each volume first (`snap purge`, `rm`), then `osd pool rm <p> <p>
 * --yes-i-really-really-mean-it`, then the pool's Zookeeper trees. Removals cannot be undone: a
 * failure part-way leaves Zookeeper saying what is gone.
 */
export function planPoolRemove(r: Req<'pool.remove'>, view: StorageView): Planned {
  if (!view.pool) return refuse(`no pool "${r.pool}" in the cluster`);
  const steps = [...view.pool.volumes.keys()].flatMap((vol) => volumeRemovalSteps(r.pool, vol, view.pool?.volumes.get(vol)));
  steps.push({ what: `removing pool "${r.pool}"`, run: poolRm(r.pool), reflect: change({ deleteTrees: poolTrees(r.pool) }) });
  return {
    kind: 'plan',
    plan: { steps, reads: [], change: () => change({ deleteTrees: poolTrees(r.pool) }), done: `Removed RBD pool "${r.pool}" and all its volumes` },
  };
}

/** A power of two (1, 2, 4, …). */
export function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** `pool set-pgs`: a power of 2; `set pg_num`, `set pgp_num` (each set back on failure), then `pgs`. */
export function planPoolSetPgs(r: Req<'pool.set-pgs'>, view: StorageView): Planned {
  if (!view.pool) return refuse(`no pool "${r.pool}" in the cluster`);
  if (!isPowerOfTwo(r.pgs)) return refuse(`the PG count must be a power of 2, not ${r.pgs}`);
  const [now, old] = [String(r.pgs), String(view.pool.pgs)];
  const back = view.pool.pgs > 0;
  const set = (key: string, value: string): CephCommand => ceph('osd', 'pool', 'set', r.pool, key, value);
  const steps: PlanStep[] = ['pg_num', 'pgp_num'].map((key) => ({
    what: `setting ${key} ${now} of pool "${r.pool}"`,
    run: set(key, now),
    ...(back ? { undo: { what: `${key} set back to ${old}`, run: set(key, old) } } : {}),
  }));
  const k = poolKeys(r.pool).pgs;
  return {
    kind: 'plan',
    plan: { steps, reads: [], change: () => change({ set: [[k.path, k.codec.encode(r.pgs)]] }), done: `Set the PG count of RBD pool "${r.pool}" to ${r.pgs}` },
  };
}
