/** netd's nftables firewall: the base ruleset and the per-network files, loaded and reloaded atomically. */
export { Firewall, type FirewallDeps, type FirewallOutcome } from './firewall.js';
export { FirewallError, type FirewallErrorCode } from './errors.js';
export { nftLayout, baseRuleset, type NftLayout } from './layout.js';
export { NFT_TIMEOUT_MS } from './nft-command.js';
export { type Skipped, type SkippedAcl, type SkippedNetwork } from './network-pass.js';
export {
  networkRuleset,
  networkProblem,
  aclProblem,
  placedAcls,
  MAX_VNI,
  type AclDirection,
  type NetworkAcl,
  type NetworkFamily,
  type NetworkFirewallSpec,
} from './network-ruleset.js';
