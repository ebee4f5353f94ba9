import type { Clock, Logger } from '@pvc/runtime';
import { createLock, fillMissingKeys, locks, type FilledKey, type ZkClient } from '@pvc/zk';

/**
 * How long start-up waits for the schema lock by default. The original blocks without limit; a
 * Python daemon holds it for its own validation (about half a second) or, after a hot schema
 * update, leaves a read contender behind until its old session expires (about 10 s).
 */
export const SCHEMA_LOCK_TIMEOUT_MS = 30_000;

/** What the fill needs. */
export interface SchemaFillDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** Bound of the wait for the lock; default {@link SCHEMA_LOCK_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
}

/** What the fill did: `locked` = filled under the lock; `lock-timeout` = skipped this start. */
export interface SchemaFillResult {
  readonly outcome: 'locked' | 'lock-timeout';
  readonly filled: readonly FilledKey[];
}

/**
 * Start-up step 7 of the original: under the WriteLock on `/schema/version` (kazoo-compatible, so
 * it waits for Python daemons validating or hot-migrating the schema), every missing v15 key of
 * every node, VM, network, OSD and pool is created with the original's default, each logged once
 * (`fillMissingKeys`).
 *
 * Must run after the tree was found initialised: taking the lock creates `/schema/version` when it
 * is absent. The wait is bounded: when the lock stays taken the fill is skipped for this start
 * with a warning — a missing key reads as its default anyway, and the fill only ever creates keys
 * (never overwrites), so it is safe to skip or to finish after losing the lock.
 */
export async function fillUnderSchemaLock(zk: ZkClient, d: SchemaFillDeps): Promise<SchemaFillResult> {
  const logger = d.logger.child({ component: 'schema' });
  const timeoutMs = d.timeoutMs ?? SCHEMA_LOCK_TIMEOUT_MS;
  const lock = createLock(zk, locks.schemaValidate, { clock: d.clock });
  const started = d.clock.now();
  if (!(await lock.acquire({ timeoutMs, signal: d.signal }))) {
    logger.warn(
      { lock: lock.path, waitedMs: d.clock.now() - started },
      `schema lock ${lock.path} still taken after ${timeoutMs} ms: missing keys are not filled at this start (they read as their defaults)`,
    );
    return { outcome: 'lock-timeout', filled: [] };
  }
  try {
    const filled = await fillMissingKeys(zk, logger, { signal: d.signal });
    logger.info({ filled: filled.length, waitedMs: d.clock.now() - started }, filled.length === 0 ? 'schema checked: no key missing' : `schema checked: ${filled.length} missing keys filled`);
    return { outcome: 'locked', filled };
  } finally {
    await lock.release();
  }
}
