import type { Command } from 'commander';
import { parseByteSize, storageNameProblem, type StorageRequest } from '@pvc/zk';
import type { CliContext } from '../context.js';
import { usage } from '../errors.js';
import { requestTitle, storageChange } from '../ops/storage-request.js';
import { DEFAULT_WAIT_TIMEOUT_S, parseWaitTimeout } from '../wait.js';

/** Options of every storage change. */
export type ChangeOpts = { wait?: boolean; waitTimeout?: string };

/** Said in the help of every storage change. */
export const CARRIED_OUT = 'Carried out by cephd on the primary (the CLI writes a request into Zookeeper and waits for its answer).';

/** `-w/--wait` (the default), `--no-wait` and `--wait-timeout` of a storage change. */
export function changeOptions(cmd: Command): Command {
  return cmd
    .option('-w, --wait', "wait for cephd's answer (the default)")
    .option('--no-wait', 'return once the request is written; cephd carries it out on its own')
    .option('--wait-timeout <seconds>', 'give up waiting after this long (exit 4; a request nobody took yet is withdrawn)', String(DEFAULT_WAIT_TIMEOUT_S));
}

/** Checks a pool, volume or snapshot name given on the command line (exit 2). */
export function nameArg(what: string, name: string): string {
  const problem = storageNameProblem(what, name);
  if (problem) throw usage(problem);
  return name;
}

/** A positive whole number (exit 2). */
export function countArg(what: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n <= 0) throw usage(`${what}: expected a positive whole number, got "${text}"`);
  return n;
}

/** A size such as 10G (exit 2). */
export function sizeArg(text: string): number {
  const n = parseByteSize(text);
  if (n === undefined) throw usage(`invalid size "${text}": expected e.g. 10G, 512M, 1.5T (1024-based) or a number of bytes`);
  return n;
}

/** A removal (or rollback) without `--yes`: refused before anything is written (exit 2). */
export function confirm(o: { yes?: boolean }, what: string): void {
  if (!o.yes) throw usage(`${what}: add --yes to confirm`);
}

/** Sends the request (waiting unless `--no-wait`) and prints the answer or the request's name. */
export async function runChange(ctx: CliContext, request: StorageRequest, o: ChangeOpts): Promise<void> {
  const waitS = o.wait === false ? undefined : parseWaitTimeout(o.waitTimeout);
  const r = await storageChange(ctx, request, waitS);
  if (r.answer) ctx.output.line(r.answer.message);
  else ctx.output.line(`Request ${r.id} written (${requestTitle(request)}): cephd on the primary carries it out`);
}
