import { PvcError } from '@pvc/runtime';

/** Stable codes of vmd errors. */
export type VmdErrorCode =
  | 'LIBVIRT_UNAVAILABLE'
  | 'LIBVIRT_ERROR'
  | 'NO_DOMAIN'
  | 'BAD_XML'
  | 'LIBVIRT_TIMEOUT'
  | 'MIGRATION_FAILED'
  | 'MIGRATION_ABORTED'
  | 'RBD_LOCKS'
  | 'MISSING_BRIDGE';

/** A vmd failure with a stable code; `message` is what goes into `failedreason` / logs. */
export class VmdError extends PvcError {
  declare readonly code: VmdErrorCode;
  constructor(code: VmdErrorCode, message: string, opts: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, opts);
  }
}
