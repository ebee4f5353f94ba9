import type { Config } from '@pvc/config';
import { describeError, retryUntilDone, type Clock, type Logger, type RetryPause } from '@pvc/runtime';
import { DatabaseLoginError, type DatabaseAdmin, type WantedDatabase } from '../host/database-admin.js';

/**
 * The databases of the coordinator services (`coordinator.dns.database`, the DNS aggregator's;
 * `coordinator.metadata.database`, the metadata API's), on coordinators whose config has them.
 */
export function planDatabases(config: Config): WantedDatabase[] {
  if (!config.isCoordinator || config.coordinator === undefined) return [];
  const { dns, metadata } = config.coordinator;
  return [
    { key: 'coordinator.dns.database', ...dns.database },
    { key: 'coordinator.metadata.database', ...metadata.database },
  ];
}

/** Options of {@link provisionDatabases}. */
export interface ProvisionOptions {
  readonly admin: DatabaseAdmin;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Pause between rounds while one is not ready (default: 2 s doubling up to 60 s). */
  readonly retry?: RetryPause;
  readonly signal: AbortSignal;
}

/** What happened to one database (for the caller's log and tests). */
export type ProvisionOutcome = 'ready' | 'ready-on-replica';

/**
 * Makes each planned database usable: its role and database created on this host's PostgreSQL
 * when absent (skipped on a standby — the primary's supervisor does it — and when this host runs
 * no server on that port: the database is elsewhere), then a login as the
 * configured user. A failure is logged naming the config key (never the password) and the round
 * is tried again after a pause that grows (2 s … 60 s), until every database works or `signal`
 * aborts. Runs beside the node's other work: nothing waits for it.
 */
export async function provisionDatabases(plan: readonly WantedDatabase[], o: ProvisionOptions): Promise<Map<string, ProvisionOutcome>> {
  const done = new Map<string, ProvisionOutcome>();
  if (plan.length === 0) return done;
  const attempt = async (): Promise<boolean> => {
    for (const db of plan) {
      if (done.has(db.key)) continue;
      const at = { key: db.key, database: db.name, user: db.user, host: db.host, port: db.port };
      try {
        const r = await o.admin.ensure(db, { signal: o.signal });
        if (r.kind === 'replica') {
          o.logger.info(at, `${db.key}: the local PostgreSQL is a standby; the primary's supervisor creates the role and database`);
        } else if (r.kind === 'no-local-server') {
          o.logger.info({ ...at, socket: r.socket }, `${db.key}: no PostgreSQL of this host on port ${db.port}: the role and database must exist on ${db.host}`);
        } else if (r.createdRole || r.createdDatabase) {
          o.logger.info({ ...at, createdRole: r.createdRole, createdDatabase: r.createdDatabase }, `${db.key}: created ${[r.createdRole ? `role "${db.user}"` : '', r.createdDatabase ? `database "${db.name}"` : ''].filter(Boolean).join(' and ')}`);
        }
        await o.admin.login(db, { signal: o.signal });
        done.set(db.key, r.kind === 'replica' ? 'ready-on-replica' : 'ready');
        o.logger.info(at, `${db.key}: database ready (login as "${db.user}" works)`);
      } catch (err) {
        if (o.signal.aborted) return true;
        const hint = err instanceof DatabaseLoginError && err.reason === 'refused-credentials' ? ` (check ${db.key}.user and ${db.key}.pass)` : '';
        o.logger.error({ ...at, err: describeError(err) }, `${db.key}: database not usable yet${hint}; trying again`);
      }
    }
    return done.size === plan.length;
  };
  await retryUntilDone(o.clock, o.retry ?? { firstMs: 2_000, maxMs: 60_000 }, attempt, o.signal);
  return done;
}
