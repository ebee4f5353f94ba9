/**
 * Builds netd's metadata duties from the config: only on a coordinator with networking and a
 * `coordinator.metadata.database` section (as the original creates its MetadataAPI object).
 *
 * @module
 */
import type { Config } from '@pvc/config';
import type { PrimaryDuty } from '@pvc/rpc';
import type { Clock, Logger, RetryPause } from '@pvc/runtime';
import type { ZkClient } from '@pvc/zk';
import type { AddressPort } from '../floating/address-port.js';
import { MetadataApi } from './api.js';
import { metadataApiDuty, metadataIpDuty, METADATA_IP, METADATA_PORT } from './duties.js';
import { GuardedUserData } from './guarded-user-data.js';
import { MetadataHttpServer } from './http-server.js';
import { zkIdentify } from './identify.js';
import { createPgUserData } from './pg-user-data.js';
import { answerMetadata } from './routes.js';
import type { UserDataSource } from './user-data.js';

/** The two duties, in takeover order of their phases (E, then G). */
export interface MetadataDuties {
  readonly ip: PrimaryDuty;
  readonly api: PrimaryDuty;
}

/** Dependencies of {@link buildMetadataApi}; `host`/`port` default to 169.254.169.254:80. */
export interface MetadataBuildDeps {
  readonly zk: ZkClient;
  readonly userData: UserDataSource;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly host?: string;
  readonly port?: number;
  readonly dbRetry?: RetryPause;
  readonly listenRetry?: RetryPause;
}

/** The API with its real listener; the pieces are returned for tests and the bench. */
export function buildMetadataApi(d: MetadataBuildDeps): { api: MetadataApi; server: MetadataHttpServer; userData: GuardedUserData } {
  const host = d.host ?? METADATA_IP;
  const port = d.port ?? METADATA_PORT;
  const userData = new GuardedUserData({ source: d.userData, clock: d.clock, logger: d.logger, retry: d.dbRetry });
  const identify = zkIdentify(d.zk, d.logger);
  const server = new MetadataHttpServer({
    host, port, logger: d.logger,
    answer: (req) => answerMetadata(req, { identify, userData: (p) => userData.forProfile(p), logger: d.logger }),
  });
  const api = new MetadataApi({ listener: server, userData, clock: d.clock, logger: d.logger, where: `${host}:${port}`, retry: d.listenRetry });
  return { api, server, userData };
}

/** netd's metadata duties for `config`, or undefined when this node runs none. */
export function metadataDuties(config: Config, d: { zk: ZkClient; addresses: AddressPort; clock: Clock; logger: Logger }): MetadataDuties | undefined {
  const db = config.coordinator?.metadata.database;
  if (!config.isCoordinator || !config.functions.enable_networking || db === undefined) return undefined;
  const { api } = buildMetadataApi({ zk: d.zk, userData: createPgUserData(db), clock: d.clock, logger: d.logger });
  return { ip: metadataIpDuty({ addresses: d.addresses, logger: d.logger }), api: metadataApiDuty(api) };
}
