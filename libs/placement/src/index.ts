export type * from './types.js';
export { SELECTORS, SELECTOR_RULES, isSelector, resolveSelector, rankNodes, provisionedHeadroomMiB } from './selectors.js';
export type { ResolvedSelector, SelectorRule } from './selectors.js';
export { parseNodeLimit } from './node-limit.js';
export { whyIneligible, ELIGIBLE_DAEMON_STATE, ELIGIBLE_DOMAIN_STATE } from './eligibility.js';
export type { EligibilityContext } from './eligibility.js';
export { selectTarget } from './select.js';
export { planPlacements, withPlacement } from './plan.js';
export type { PlacementPlan, VmPlacement } from './plan.js';
