/** The firewall's errors: each names the file concerned and, when nft answered, nft's own words. */
import { PvcError } from '@pvc/runtime';

/**
 * - `FIREWALL_REJECTED`: nft refused the ruleset (a syntax or kernel error in `file`); retrying
 *   the same files cannot help.
 * - `FIREWALL_NFT_UNAVAILABLE`: nft could not be run at all (not installed, not executable).
 * - `FIREWALL_TIMEOUT`: nft did not finish within its deadline.
 * - `FIREWALL_ABORTED`: netd is shutting down.
 * - `FIREWALL_FILES`: the rule files or their directories could not be written.
 */
export type FirewallErrorCode = 'FIREWALL_REJECTED' | 'FIREWALL_NFT_UNAVAILABLE' | 'FIREWALL_TIMEOUT' | 'FIREWALL_ABORTED' | 'FIREWALL_FILES';

/** A firewall load that did not happen; the ruleset in force is the one before it. */
export class FirewallError extends PvcError {
  /** The file at fault: the per-network or static file nft named, else base.nft. */
  readonly file: string;
  /** nft's message (stderr, trimmed), when nft ran and answered. */
  readonly nftMessage: string | undefined;

  constructor(code: FirewallErrorCode, message: string, opts: { file: string; nftMessage?: string; cause?: unknown }) {
    super(code, message, { cause: opts.cause, retryable: code === 'FIREWALL_TIMEOUT' });
    this.file = opts.file;
    this.nftMessage = opts.nftMessage;
  }
}
