/**
 * The fake {@link UserDataSource}: user-data per profile in a map, with a `down` knob (every call
 * fails as the real one does when the server is gone or refuses the credentials).
 *
 * @module
 */
import { METADATA_DB_KEY, UserDataError, type UserDataFailure, type UserDataSource } from './user-data.js';

export class FakeUserData implements UserDataSource {
  /** profile name → user-data (null = the profile has no user-data row). */
  readonly profiles = new Map<string, string | null>();
  /** When set, every call fails with this reason. */
  down: UserDataFailure | undefined;
  /** Calls made, for assertions. */
  readonly calls: string[] = [];

  private fail(): void {
    if (this.down) throw new UserDataError(this.down, `${METADATA_DB_KEY}: fake database ${this.down}`);
  }

  forProfile(profile: string): Promise<string | null> {
    this.calls.push(`forProfile ${profile}`);
    this.fail();
    return Promise.resolve(this.profiles.get(profile) ?? null);
  }

  check(): Promise<void> {
    this.calls.push('check');
    this.fail();
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
