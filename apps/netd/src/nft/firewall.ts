/**
 * netd's firewall (pvc-inventory §7.4): netd owns the node's whole nftables ruleset. At start it
 * writes `<dynamic_directory>/nft/base.nft` and loads it; later changes (per-network files, next
 * issue) ask for {@link Firewall.reload}.
 *
 * Safety invariants:
 * - a load is one nft transaction, and it is only tried after `nft -c` accepted the same files, so a
 *   broken file never leaves a half-applied or empty ruleset: the ruleset in force stays as it was;
 * - with `functions.enable_networking: false` no file is written and nft is never run;
 * - nothing here throws into netd: every failure becomes an outcome and one error log line.
 */
import { CoalescingRunner, describeError, type Exec, type Logger } from '@pvc/runtime';
import { FirewallError } from './errors.js';
import { writeBaseFiles } from './files.js';
import { nftLayout, type NftLayout } from './layout.js';
import { NFT_TIMEOUT_MS, runNft } from './nft-command.js';

/** Dependencies of {@link Firewall}, built by the composition root. */
export interface FirewallDeps {
  /** `functions.enable_networking`: false = leave the ruleset alone. */
  enabled: boolean;
  /** `system.configuration.directories.dynamic_directory`; the files go to its `nft/`. */
  dynamicDirectory: string;
  exec: Exec;
  logger: Logger;
  /** The command line that runs nft (default `['nft']`). */
  nftCommand?: readonly string[];
  /** Deadline of one nft call, ms (default {@link NFT_TIMEOUT_MS}). */
  nftTimeoutMs?: number;
}

/** What one reload pass did. `reasons` lists every request the pass served. */
export type FirewallOutcome =
  | { readonly status: 'loaded'; readonly reasons: readonly string[] }
  | { readonly status: 'failed'; readonly reasons: readonly string[]; readonly error: FirewallError }
  | { readonly status: 'disabled' };

/** The node's nftables ruleset, reloaded one pass at a time. */
export class Firewall {
  readonly layout: NftLayout;
  private readonly runner = new CoalescingRunner<FirewallOutcome>((reasons) => this.pass(reasons));
  private signal: AbortSignal | undefined;
  private disabledLogged = false;
  private lastOutcome: FirewallOutcome | undefined;
  /** Number of passes run (each is one check, and one load if the check passed). */
  passes = 0;

  constructor(private readonly deps: FirewallDeps) {
    this.layout = nftLayout(deps.dynamicDirectory);
  }

  /** The last pass's outcome (undefined before the first). */
  get last(): FirewallOutcome | undefined {
    return this.lastOutcome;
  }

  /**
   * Writes the base file and loads the ruleset (or, disabled, logs once that the firewall is left
   * alone). `signal` (the shutdown signal) also cuts short later reloads. Never rejects.
   */
  start(signal?: AbortSignal): Promise<FirewallOutcome> {
    this.signal = signal;
    return this.reload('start');
  }

  /**
   * Asks for a reload. One pass runs at a time; requests during a pass are served together by one
   * more pass. Resolves with the outcome of a pass that started after this call. Never rejects.
   */
  reload(reason: string): Promise<FirewallOutcome> {
    if (!this.deps.enabled) {
      if (!this.disabledLogged) {
        this.disabledLogged = true;
        this.deps.logger.info({ reason }, 'networking is not enabled on this node (functions.enable_networking): the firewall (nftables) is left alone');
      }
      return Promise.resolve({ status: 'disabled' });
    }
    return this.runner.request(reason);
  }

  /** Resolves once no reload is running or waiting (shutdown waits on it). */
  idle(): Promise<void> {
    return this.runner.idle();
  }

  private async pass(reasons: readonly string[]): Promise<FirewallOutcome> {
    this.passes++;
    const outcome = await this.checkAndLoad(reasons);
    this.lastOutcome = outcome;
    return outcome;
  }

  private async checkAndLoad(reasons: readonly string[]): Promise<FirewallOutcome> {
    const { logger } = this.deps;
    const cmd = {
      exec: this.deps.exec,
      argv: this.deps.nftCommand ?? ['nft'],
      timeoutMs: this.deps.nftTimeoutMs ?? NFT_TIMEOUT_MS,
      signal: this.signal,
    };
    try {
      await writeBaseFiles(this.layout);
      await runNft(cmd, 'check', this.layout.base);
      await runNft(cmd, 'load', this.layout.base);
    } catch (err) {
      const error = err instanceof FirewallError ? err : new FirewallError('FIREWALL_FILES', describeError(err), { file: this.layout.base, cause: err });
      const fields = { reasons, code: error.code, file: error.file, err: error.message, nft: error.nftMessage };
      if (error.code === 'FIREWALL_ABORTED') logger.warn(fields, 'firewall reload cut short by shutdown');
      else logger.error(fields, 'firewall ruleset not loaded; the ruleset in force is left as it was');
      return { status: 'failed', reasons, error };
    }
    logger.info({ reasons, file: this.layout.base }, 'firewall ruleset loaded');
    return { status: 'loaded', reasons };
  }
}
