/**
 * A fake {@link RadosClient} for unit tests: images with locks, a record of every call in order,
 * and failure knobs. Its real counterpart (`librados.ts`) is checked against a real Ceph in
 * tests/integration/ceph/rbd-locks.test.ts (cephd's lock flushes and `osd down` go through it).
 */
import { RadosError, type RadosClient } from './librados.js';
import type { RbdLock } from '../lock-list.js';

export class FakeRados implements RadosClient {
  /** Locks per `pool/image`; an image not in the map does not exist (ENOENT). */
  readonly images = new Map<string, RbdLock[]>();
  /** Every call: `list <image>`, `break <image> <locker> <id>`, `mon <json>`. */
  readonly calls: string[] = [];
  /** Failure knobs: an errno for a call on an image, or for every monitor command. */
  readonly knobs: { listErrno?: Map<string, number>; breakErrno?: Map<string, number>; monErrno?: number } = {};
  closed = false;

  connect(): Promise<void> {
    this.calls.push('connect');
    return Promise.resolve();
  }

  latestOsdMap(): Promise<void> {
    this.calls.push('latest osdmap');
    return Promise.resolve();
  }

  listLocks(image: string): Promise<RbdLock[]> {
    this.calls.push(`list ${image}`);
    const errno = this.knobs.listErrno?.get(image) ?? (this.images.has(image) ? undefined : 2);
    if (errno !== undefined) return Promise.reject(new RadosError(errno === 2 ? 'rbd_open' : 'rbd_list_lockers', errno, image));
    return Promise.resolve([...(this.images.get(image) ?? [])]);
  }

  breakLock(image: string, lock: RbdLock): Promise<void> {
    this.calls.push(`break ${image} ${lock.locker} ${lock.id}`);
    const errno = this.knobs.breakErrno?.get(image);
    if (errno !== undefined) return Promise.reject(new RadosError('rbd_break_lock', errno, `${image} ${lock.locker} "${lock.id}"`));
    const locks = this.images.get(image) ?? [];
    this.images.set(image, locks.filter((l) => !(l.id === lock.id && l.locker === lock.locker)));
    return Promise.resolve();
  }

  /** Answers of {@link monCommand} by prefix (`status`, `osd dump`, …); others answer "". */
  readonly monAnswers = new Map<string, string>();

  monCommand(cmd: Record<string, unknown>): Promise<string> {
    this.calls.push(`mon ${JSON.stringify(cmd)}`);
    if (this.knobs.monErrno !== undefined) return Promise.reject(new RadosError('rados_mon_command', this.knobs.monErrno, String(cmd.prefix)));
    return Promise.resolve(this.monAnswers.get(String(cmd.prefix)) ?? '');
  }

  /** Answers of {@link mgrCommand} by prefix (`osd df`, …); others answer "". */
  readonly mgrAnswers = new Map<string, string>();

  mgrCommand(cmd: Record<string, unknown>): Promise<string> {
    this.calls.push(`mgr ${JSON.stringify(cmd)}`);
    return Promise.resolve(this.mgrAnswers.get(String(cmd.prefix)) ?? '');
  }

  close(): void {
    this.closed = true;
  }
}
