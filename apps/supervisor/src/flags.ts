import { parseArgs } from 'node:util';
import type { ServiceFlag } from '@pvc/rpc';

/**
 * Reads the supervisor's own flags before the common start-up (so a bad value exits 2 before
 * anything starts); unknown flags are left for serviceMain to reject.
 */
export function peekFlags(argv: readonly string[], defs: Readonly<Record<string, ServiceFlag>>): Record<string, string | boolean | undefined> {
  const options = Object.fromEntries(Object.entries(defs).map(([n, f]) => [n, { type: f.type }]));
  const { values } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true });
  return Object.fromEntries(Object.keys(defs).map((n) => [n, (values as Record<string, string | boolean | undefined>)[n]]));
}
