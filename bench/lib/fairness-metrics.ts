/**
 * The metrics the fairness benchmark reports. They decide what BENCHMARKS.md says about the
 * planner, so they are unit-tested (test/unit/bench/fairness-metrics.test.ts).
 */

/**
 * Jain's fairness index (Σx)² ÷ (n·Σx²) of what each queue got (divided by its weight): 1 when all
 * got the same, 1/n when one got everything. Equal shares of nothing count as fair (1); queues
 * that got nothing at all are reported as starved, separately.
 */
export function jainIndex(amounts: readonly number[]): number {
  if (amounts.length === 0) throw new RangeError("Jain's index needs at least one amount");
  for (const x of amounts)
    if (!(x >= 0) || !Number.isFinite(x)) throw new RangeError(`amounts must be finite and ≥ 0, got ${x}`);
  const sum = amounts.reduce((a, b) => a + b, 0);
  const squares = amounts.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (amounts.length * squares);
}

/**
 * Share of the usable capacity a pass used: moved ÷ min(capacity, Σ depth). What moved beyond
 * capacity is overshoot, not use, so this never exceeds 1. Undefined when nothing could move
 * (no capacity or no messages): such a pass neither uses nor wastes anything.
 */
export function capacityUsed(moved: number, capacity: number, totalDepth: number): number | undefined {
  const usable = Math.min(capacity, totalDepth);
  if (usable <= 0) return undefined;
  return Math.min(moved, usable) / usable;
}

/** Messages moved beyond the target's capacity in a pass (they overfill it). */
export function overshoot(moved: number, capacity: number): number {
  return Math.max(0, moved - capacity);
}
