/**
 * Runs `nft -c -f <file>` (check) and `nft -f <file>` (load) through the Exec port and turns every
 * way it can go wrong into a {@link FirewallError} naming the file at fault and nft's message.
 */
import { AbortedError, describeError, type Exec, type ExecResult, TimeoutError } from '@pvc/runtime';
import { FirewallError } from './errors.js';

/** How nft is run. */
export interface NftCommand {
  exec: Exec;
  /**
   * The command line that runs nft, before its own arguments: `['nft']` on a node; tests run it in
   * a network namespace with `['ip', 'netns', 'exec', '<ns>', 'nft']`.
   */
  argv: readonly string[];
  /** Deadline of one nft call, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Default deadline of one nft call: a ruleset with hundreds of networks loads in well under 1 s. */
export const NFT_TIMEOUT_MS = 10_000;

/** The location nft reports for an error: `<file>:<line>:<col>[-<col>]: Error: <text>`. */
const LOCATED = /^(\S+?):(\d+):\d+(?:-\d+)?: Error: (.*)$/m;
/** nft (or the wrapper that runs it) is not there: a shell's 127, `ip netns exec`'s message. */
const MISSING = /command not found|^exec of ".*" failed/m;

/**
 * Checks (`mode: 'check'`, nothing changes) or loads (`'load'`, one transaction) `file`.
 * Resolves when nft accepted it; otherwise throws a {@link FirewallError}.
 */
export async function runNft(cmd: NftCommand, mode: 'check' | 'load', file: string): Promise<void> {
  const [command, ...pre] = cmd.argv;
  if (command === undefined) throw new FirewallError('FIREWALL_NFT_UNAVAILABLE', 'no nft command configured', { file });
  const args = [...pre, ...(mode === 'check' ? ['-c'] : []), '-f', file];
  let r: ExecResult;
  try {
    r = await cmd.exec.run(command, args, { timeoutMs: cmd.timeoutMs, signal: cmd.signal });
  } catch (err) {
    throw fromThrown(err, command, [command, ...args].join(' '), file);
  }
  if (r.exitCode !== 0) throw fromExit(r, [command, ...args].join(' '), file);
}

function fromThrown(err: unknown, command: string, line: string, file: string): FirewallError {
  if (err instanceof TimeoutError) return new FirewallError('FIREWALL_TIMEOUT', `${line}: ${err.message}; ${file} not loaded`, { file, cause: err });
  if (err instanceof AbortedError) return new FirewallError('FIREWALL_ABORTED', `${line}: aborted (shutdown); ${file} not loaded`, { file, cause: err });
  const text = describeError(err);
  const reason = /\bENOENT\b/.test(text) ? `${command} not found (is nftables installed?)` : firstLine(text);
  return new FirewallError('FIREWALL_NFT_UNAVAILABLE', `cannot run nft to load ${file}: ${reason}`, { file, cause: err });
}

function fromExit(r: ExecResult, line: string, base: string): FirewallError {
  const nftMessage = r.stderr.trim() || r.stdout.trim() || `exit status ${r.exitCode}`;
  if (r.exitCode === 127 || MISSING.test(nftMessage)) {
    return new FirewallError('FIREWALL_NFT_UNAVAILABLE', `cannot run nft to load ${base}: ${line}: ${firstLine(nftMessage)}`, { file: base, nftMessage });
  }
  const located = LOCATED.exec(nftMessage);
  // nft says `internal:0:0-0` for errors outside any file (e.g. a file it cannot open).
  if (located?.[1]?.startsWith('/')) {
    const [, file, lineNo, text = ''] = located;
    return new FirewallError('FIREWALL_REJECTED', `nft rejected ${file} (line ${lineNo}): ${text}`, { file, nftMessage });
  }
  if (located) return new FirewallError('FIREWALL_REJECTED', `nft rejected ${base}: ${located[3] ?? ''}`, { file: base, nftMessage });
  return new FirewallError('FIREWALL_REJECTED', `nft rejected ${base}: ${firstLine(nftMessage)}`, { file: base, nftMessage });
}

function firstLine(text: string): string {
  return text.split('\n').find((l) => l.trim() !== '')?.trim() ?? text;
}
