/** Test support of @pvc/hostnet: the LinkPort contract suite (fake in the unit tier, `ip` in the integration tier). */
export { registerLinkContract, type LinkContractHarness } from './link-contract.js';
