/**
 * Port to the provisioner database the metadata API reads user-data from (the original's
 * `profile JOIN userdata`, config `coordinator.metadata.database`). The real adapter is
 * {@link createPgUserData} (`pg`), the fake {@link FakeUserData}.
 *
 * @module
 */
import { PvcError } from '@pvc/runtime';

/** The config key every message about the database names. */
export const METADATA_DB_KEY = 'coordinator.metadata.database';

/** Why the database could not answer. */
export type UserDataFailure = 'refused-credentials' | 'no-database' | 'unreachable' | 'query-failed';

/** The database could not answer (code `USERDATA_UNAVAILABLE`); the message names the config key, never the password. */
export class UserDataError extends PvcError {
  constructor(readonly reason: UserDataFailure, message: string, cause?: unknown) {
    super('USERDATA_UNAVAILABLE', message, { cause, retryable: true });
  }
}

/** The port. */
export interface UserDataSource {
  /** The user-data of the profile named `profile`; null when the profile or its user-data does not exist. Throws {@link UserDataError}. */
  forProfile(profile: string): Promise<string | null>;
  /** Runs the query's shape without reading a row: resolves when the database could answer. Throws {@link UserDataError}. */
  check(): Promise<void>;
  /** Releases the connections. */
  close(): Promise<void>;
}
