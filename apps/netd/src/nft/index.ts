/** netd's nftables firewall: the base ruleset, loaded and reloaded atomically. */
export { Firewall, type FirewallDeps, type FirewallOutcome } from './firewall.js';
export { FirewallError, type FirewallErrorCode } from './errors.js';
export { nftLayout, baseRuleset, type NftLayout } from './layout.js';
export { NFT_TIMEOUT_MS } from './nft-command.js';
