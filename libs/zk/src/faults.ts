/** What cluster health needs of a stored fault (`/faults/<id>/status` and `delta`). */
export interface FaultHealthInput {
  /** `new` or `ack`; anything else counts as not acknowledged. */
  status: string;
  delta: number;
}

/**
 * Cluster health as the original's API computes it from the stored faults: 100 minus the deltas of
 * every fault not acknowledged, at least 0. A negative or non-finite delta counts as 0. The one rule
 * keepaliled (which writes the faults) and the `pvc` command (which shows them) share.
 */
export function clusterHealth(faults: readonly FaultHealthInput[]): number {
  const penalty = faults
    .filter((f) => f.status !== 'ack')
    .reduce((s, f) => s + (Number.isFinite(f.delta) && f.delta > 0 ? f.delta : 0), 0);
  return Math.max(0, 100 - penalty);
}
