/**
 * How long an execution with nothing due stays for the next request instead of leaving
 * (docs/distributor.md "Run model"), priced at list prices for a 512 MB execution
 * (serverless.yml memorySize) polling the board every 250 ms: a second of waiting is
 * 0.5 GB-s ($8.33e-6) and 4 board reads ($0.5e-6), $8.83e-6 in all. Leaving and a new execution
 * coming back costs its slot claim and leave (2 writes), an invocation ($0.2e-6), ≈ $1.45e-6,
 * plus per lease held a give-back and a re-take (2 writes) and the rotation read again
 * (1 read), ≈ $1.375e-6: LEAVE_COST_MS and LEASE_COST_MS of waiting.
 */
export const LEAVE_COST_MS = 160;
export const LEASE_COST_MS = 155;
/**
 * Under steady traffic requests come at least once a router batching window (1 s): a shorter
 * stay mostly waits in vain, so an execution whose leaving costs less than this leaves at once
 * (at light load one target's execution would otherwise wait out most of every window).
 */
export const MIN_LINGER_MS = 1_000;

/** Ms to stay for a request with `leases` held: what leaving would cost, at most `boundMs`; 0 below MIN_LINGER_MS. Pure. */
export function lingerMs(leases: number, boundMs: number): number {
  const breakEven = LEAVE_COST_MS + leases * LEASE_COST_MS;
  return breakEven < MIN_LINGER_MS ? 0 : Math.min(boundMs, breakEven);
}
