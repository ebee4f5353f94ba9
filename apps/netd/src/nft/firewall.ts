/**
 * netd's firewall (pvc-inventory §7.4): netd owns the node's whole nftables ruleset. At start it
 * writes `<dynamic_directory>/nft/base.nft` and loads it; the network watch then sets and removes
 * managed networks ({@link Firewall.setNetworks}, {@link Firewall.setNetwork},
 * {@link Firewall.removeNetwork}), each of which writes `networks/<vni>.nft` and reloads.
 *
 * Safety invariants:
 * - a load is one nft transaction, and it is only tried after `nft -c` accepted the same files, so a
 *   broken file never leaves a half-applied or empty ruleset: the ruleset in force stays as it was;
 * - with `functions.enable_networking: false` no file is written and nft is never run;
 * - nothing here throws into netd: every failure becomes an outcome and one error log line;
 * - a user ACL nft refuses is left out (reported in the outcome with its network and name, one
 *   error log line each) and the rest of the ruleset still loads (see network-pass.ts).
 */
import { CoalescingRunner, describeError, type Exec, type Logger } from '@pvc/runtime';
import { FirewallError } from './errors.js';
import { nftLayout, type NftLayout } from './layout.js';
import { NFT_TIMEOUT_MS, runNft } from './nft-command.js';
import { checkCandidate, type Skipped } from './network-pass.js';
import type { NetworkFirewallSpec } from './network-ruleset.js';

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

/**
 * What one reload pass did. `reasons` lists every request the pass served; `skipped` what it left
 * out (ACLs nft refused, malformed networks), also when the pass failed for another reason.
 */
export type FirewallOutcome =
  | { readonly status: 'loaded'; readonly reasons: readonly string[]; readonly skipped: readonly Skipped[] }
  | { readonly status: 'failed'; readonly reasons: readonly string[]; readonly skipped: readonly Skipped[]; readonly error: FirewallError }
  | { readonly status: 'disabled' };

/** The node's nftables ruleset, reloaded one pass at a time. */
export class Firewall {
  readonly layout: NftLayout;
  private readonly runner = new CoalescingRunner<FirewallOutcome>((reasons) => this.pass(reasons));
  private signal: AbortSignal | undefined;
  private disabledLogged = false;
  private lastOutcome: FirewallOutcome | undefined;
  /** The managed networks wanted, by VNI. */
  private readonly networks = new Map<number, NetworkFirewallSpec>();
  /** VNIs whose file must go at the next pass. */
  private readonly removals = new Set<number>();
  /** Set by {@link setNetworks}: from then on every pass removes the files of unknown networks. */
  private prune = false;
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

  /**
   * Sets (adds or replaces) one managed network's firewall and reloads. Never rejects.
   * The outcome's `skipped` lists this network's refused ACLs, if any.
   */
  setNetwork(spec: NetworkFirewallSpec): Promise<FirewallOutcome> {
    this.networks.set(spec.vni, spec);
    this.removals.delete(spec.vni);
    return this.reload(`network ${spec.vni} set`);
  }

  /** Removes network `vni`'s file (known or left by an earlier netd) and reloads. Never rejects. */
  removeNetwork(vni: number): Promise<FirewallOutcome> {
    this.networks.delete(vni);
    this.removals.add(vni);
    return this.reload(`network ${vni} removed`);
  }

  /**
   * Sets the complete list of managed networks and reloads: from now on, files of networks not
   * set are removed at every pass (until the first call, files left by an earlier netd are kept, so
   * a restart does not drop the networks' rules before the watch has listed them). Never rejects.
   */
  setNetworks(specs: readonly NetworkFirewallSpec[], reason = 'networks listed'): Promise<FirewallOutcome> {
    this.networks.clear();
    for (const spec of specs) this.networks.set(spec.vni, spec);
    this.removals.clear();
    this.prune = true;
    return this.reload(reason);
  }

  /** The VNIs of the networks set, ascending. */
  get networkVnis(): number[] {
    return [...this.networks.keys()].sort((a, b) => a - b);
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
    const remove = new Set(this.removals);
    let skipped: readonly Skipped[] = [];
    try {
      const checked = await checkCandidate({ layout: this.layout, cmd, networks: [...this.networks.values()], remove, prune: this.prune });
      skipped = checked.skipped;
      for (const vni of remove) this.removals.delete(vni);
      this.logSkipped(reasons, skipped);
      if (checked.error) throw checked.error;
      await runNft(cmd, 'load', this.layout.base);
    } catch (err) {
      const error = err instanceof FirewallError ? err : new FirewallError('FIREWALL_FILES', describeError(err), { file: this.layout.base, cause: err });
      const fields = { reasons, code: error.code, file: error.file, err: error.message, nft: error.nftMessage };
      if (error.code === 'FIREWALL_ABORTED') logger.warn(fields, 'firewall reload cut short by shutdown');
      else logger.error(fields, 'firewall ruleset not loaded; the ruleset in force is left as it was');
      return { status: 'failed', reasons, skipped, error };
    }
    logger.info({ reasons, file: this.layout.base, ...(skipped.length > 0 ? { skipped: skipped.length } : {}) }, 'firewall ruleset loaded');
    return { status: 'loaded', reasons, skipped };
  }

  private logSkipped(reasons: readonly string[], skipped: readonly Skipped[]): void {
    for (const s of skipped) {
      if (s.kind === 'acl') {
        this.deps.logger.error({ reasons, vni: s.vni, direction: s.direction, acl: s.name, rule: s.rule, err: s.reason }, 'network firewall rule refused; it is left out of the ruleset');
      } else {
        this.deps.logger.error({ reasons, vni: s.vni, err: s.reason }, 'network firewall not written: the network is malformed; it gets no rules');
      }
    }
  }
}
