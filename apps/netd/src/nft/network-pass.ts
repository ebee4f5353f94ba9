/**
 * One firewall pass up to a checked candidate: writes base.nft and the per-network files, checks
 * the whole candidate with `nft -c`, and, when nft refuses it, finds the user ACLs at fault, leaves
 * them out and checks again. Nothing is loaded here; the caller loads base.nft only when this
 * returns no error, so a refused candidate never reaches the kernel.
 *
 * Finding the ACLs at fault: nft names the file of its (first) error. If that is a network's file,
 * each ACL of that network is checked on its own (`nft -c` of a probe file holding the base table,
 * the static files, every network's chains and fixed rules, and that one ACL); otherwise every
 * network with ACLs is probed. The ACLs nft refuses are left out and the candidate checked again,
 * until it passes or a refusal cannot be charged to any ACL (then the pass fails as a whole, and the
 * ruleset in force stays). Each network is probed at most once a pass, so a pass is bounded.
 */
import { FirewallError } from './errors.js';
import { networkFile, syncNetworkFiles, writeBaseFiles, writeProbeFile } from './files.js';
import type { NftLayout } from './layout.js';
import { type NftCommand, runNft } from './nft-command.js';
import {
  type AclDirection,
  aclKey,
  aclProblem,
  networkProblem,
  networkRuleset,
  type NetworkFirewallSpec,
  placedAcls,
  probeRuleset,
} from './network-ruleset.js';

/** A user ACL left out of the ruleset, and why. */
export interface SkippedAcl {
  readonly kind: 'acl';
  readonly vni: number;
  readonly direction: AclDirection;
  readonly name: string;
  readonly rule: string;
  /** nft's own error text, or why the text was refused before nft saw it. */
  readonly reason: string;
}

/** A network given no file at all because its definition is malformed. */
export interface SkippedNetwork {
  readonly kind: 'network';
  readonly vni: number;
  readonly reason: string;
}

/** What a pass left out. */
export type Skipped = SkippedAcl | SkippedNetwork;

/** What the pass works on: a snapshot of the wanted networks and the files to remove. */
export interface NetworkPassInput {
  readonly layout: NftLayout;
  readonly cmd: NftCommand;
  readonly networks: readonly NetworkFirewallSpec[];
  readonly remove: ReadonlySet<number>;
  readonly prune: boolean;
}

/** The result: no `error` = base.nft and the files it includes passed `nft -c`. */
export interface CheckedCandidate {
  readonly error?: FirewallError;
  readonly skipped: readonly Skipped[];
}

/** Writes and checks the candidate, leaving out refused ACLs. Throws only {@link FirewallError}. */
export async function checkCandidate(input: NetworkPassInput): Promise<CheckedCandidate> {
  const { layout, cmd } = input;
  const { valid, skipped, leftOut } = screen(input.networks);
  const leaveOut = (s: SkippedAcl): void => {
    leftOut.add(aclKey(s.vni, s.direction, s.name));
    skipped.push(s);
  };
  const remove = new Set([...input.remove, ...skipped.filter((s) => s.kind === 'network').map((s) => s.vni)]);
  const writeAndCheck = async (): Promise<FirewallError | undefined> => {
    await writeBaseFiles(layout);
    await syncNetworkFiles(layout, { write: new Map(valid.map((s) => [s.vni, networkRuleset(s, leftOut)])), remove, prune: input.prune });
    return nftError(() => runNft(cmd, 'check', layout.base));
  };

  let error = await writeAndCheck();
  const probed = new Set<number>();
  let contextChecked = false;
  while (error?.code === 'FIREWALL_REJECTED') {
    const named = valid.find((s) => networkFile(layout, s.vni) === error?.file);
    const targets = named ? [named].filter((s) => !probed.has(s.vni)) : valid.filter((s) => !probed.has(s.vni) && placedAcls(s).length > 0);
    if (targets.length === 0) break;
    if (!contextChecked) {
      // Without this, a broken static file would make every probe fail and every ACL look guilty.
      const ctx = await nftError(async () => runNft(cmd, 'check', await writeProbeFile(layout, probeRuleset(layout.staticDir, valid))));
      if (ctx) return { error: ctx.code === 'FIREWALL_REJECTED' ? error : ctx, skipped };
      contextChecked = true;
    }
    const before = skipped.length;
    for (const spec of targets) {
      probed.add(spec.vni);
      const failure = await probeAcls(input, valid, spec, leftOut, leaveOut);
      if (failure) return { error: failure, skipped };
    }
    if (skipped.length === before) break;
    error = await writeAndCheck();
  }
  return error ? { error, skipped } : { skipped };
}

/**
 * What can be written without asking nft: the well-formed networks (by VNI), and the networks and
 * ACLs refused on sight ({@link networkProblem}, {@link aclProblem}).
 */
function screen(networks: readonly NetworkFirewallSpec[]): { valid: NetworkFirewallSpec[]; skipped: Skipped[]; leftOut: Set<string> } {
  const valid: NetworkFirewallSpec[] = [];
  const skipped: Skipped[] = [];
  const leftOut = new Set<string>();
  for (const spec of [...networks].sort((a, b) => a.vni - b.vni)) {
    const problem = networkProblem(spec);
    if (problem !== undefined) {
      skipped.push({ kind: 'network', vni: spec.vni, reason: problem });
      continue;
    }
    valid.push(spec);
    for (const acl of placedAcls(spec)) {
      const reason = aclProblem(acl.rule);
      if (reason === undefined) continue;
      leftOut.add(aclKey(spec.vni, acl.direction, acl.name));
      skipped.push({ kind: 'acl', vni: spec.vni, direction: acl.direction, name: acl.name, rule: acl.rule, reason });
    }
  }
  return { valid, skipped, leftOut };
}

/** Checks each ACL of `spec` not yet left out on its own; leaves out those nft refuses. */
async function probeAcls(
  input: NetworkPassInput,
  valid: readonly NetworkFirewallSpec[],
  spec: NetworkFirewallSpec,
  leftOut: ReadonlySet<string>,
  leaveOut: (s: SkippedAcl) => void,
): Promise<FirewallError | undefined> {
  const { layout, cmd } = input;
  for (const acl of placedAcls(spec)) {
    if (leftOut.has(aclKey(spec.vni, acl.direction, acl.name))) continue;
    const err = await nftError(async () => runNft(cmd, 'check', await writeProbeFile(layout, probeRuleset(layout.staticDir, valid, acl))));
    if (err === undefined) continue;
    // Anything but a refusal (timeout, nft gone, shutdown) says nothing about the ACL: stop the pass.
    if (err.code !== 'FIREWALL_REJECTED') return err;
    leaveOut({ kind: 'acl', vni: spec.vni, direction: acl.direction, name: acl.name, rule: acl.rule, reason: nftErrorText(err) });
  }
  return undefined;
}

async function nftError(fn: () => Promise<void>): Promise<FirewallError | undefined> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    if (err instanceof FirewallError) return err;
    throw err;
  }
}

/** nft's first `Error: …` text (its words about the rule), else the error's message. */
function nftErrorText(err: FirewallError): string {
  return /Error: (.*)$/m.exec(err.nftMessage ?? '')?.[1]?.trim() ?? err.message;
}
