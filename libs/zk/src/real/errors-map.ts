import zookeeper from 'node-zookeeper-client';
import { ZK_ERROR_CODES, ZkError, zkError, type ZkErrorCode } from '../errors.js';

const KNOWN: ReadonlySet<string> = new Set(ZK_ERROR_CODES);

/** Name of a numeric Zookeeper error code (from node-zookeeper-client's table). */
export function codeName(code: number): ZkErrorCode {
  const E = zookeeper.Exception as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(E)) {
    if (value === code && KNOWN.has(name)) return name as ZkErrorCode;
  }
  return 'SYSTEM_ERROR';
}

/**
 * Maps whatever node-zookeeper-client throws or calls back with to a {@link ZkError}: its
 * Exception objects by code, its argument assertions (bad paths) to BAD_ARGUMENTS.
 */
export function toZkError(err: unknown, path?: string): ZkError {
  if (err instanceof ZkError) return err;
  if (err instanceof zookeeper.Exception) {
    const e = err as unknown as { getCode(): number };
    return zkError(codeName(e.getCode()), path, err);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ZkError('BAD_ARGUMENTS', `${path ?? 'zk call'}: ${message}`, { path, cause: err });
}
