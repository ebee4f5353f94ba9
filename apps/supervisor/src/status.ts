import type { ChildServiceInfo } from '@pvc/rpc';
import type { ChildGroup } from './children/group.js';
import { CHILD_SERVICES } from './children/group.js';
import type { RunMode } from './options.js';

/** What the supervisor reports over gRPC (ListServices), whatever phase it is in. */
export class SupervisorStatus {
  private group: ChildGroup | undefined;
  private mode: RunMode = 'standalone';

  setMode(mode: RunMode): void {
    this.mode = mode;
  }

  attach(group: ChildGroup): void {
    this.group = group;
  }

  /** Children in standalone mode; in systemd mode each service is `external` (its own unit). */
  services(): ChildServiceInfo[] {
    if (this.group) return this.group.snapshots();
    const state = this.mode === 'systemd' ? 'external' : 'starting';
    return CHILD_SERVICES.map((name) => ({ name, state, pid: 0, restarts: 0, lastExit: '' }));
  }
}
