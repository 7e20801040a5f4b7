/**
 * Tenant priority (SPEC §1), pure: a check decides a document's priority level from its
 * tenant's pending count. Level 1 is the highest priority, and a tenant sinks as it pushes
 * many documents in a short time.
 */

/** "count < below → level", read in order; the first that holds wins. */
export interface LevelThreshold {
  below: number;
  level: number;
}

export interface TenantPriorityRules {
  /** A check more than this long after the last update resets the count to 0. */
  resetIntervalMs: number;
  /** Ascending by `below`, so the first match is the lowest band the count falls in. */
  thresholds: readonly LevelThreshold[];
  /** The level of a count that is below no threshold (a quiet tenant). */
  quietLevel: number;
}

export interface TenantState {
  count: number;
  /** Epoch milliseconds of the last check. */
  lastUpdateMs: number;
}

/** The seed's table (000_…): 1 is processed first, 9 last. */
export const defaultThresholds: readonly LevelThreshold[] = [
  { below: -20, level: 9 },
  { below: -14, level: 8 },
  { below: -12, level: 7 },
  { below: -10, level: 6 },
  { below: -8, level: 5 },
  { below: -6, level: 4 },
  { below: -4, level: 3 },
  { below: -2, level: 2 },
];

export const defaultRules: TenantPriorityRules = {
  resetIntervalMs: 1_500_000,
  thresholds: defaultThresholds,
  quietLevel: 1,
};

export function levelOf(count: number, rules: Pick<TenantPriorityRules, 'thresholds' | 'quietLevel'>): number {
  return rules.thresholds.find((t) => count < t.below)?.level ?? rules.quietLevel;
}

/** Whether a check at `nowMs` starts the tenant afresh: no state, or *more than* the interval since the last update. */
export function isExpired(state: TenantState | undefined, nowMs: number, rules: TenantPriorityRules): boolean {
  return state === undefined || nowMs - state.lastUpdateMs > rules.resetIntervalMs;
}

export interface CheckResult {
  state: TenantState;
  /** The count after each check, in order. */
  counts: number[];
  /** The level of each check, in order. */
  levels: number[];
}

/** `k` checks of one tenant at the same instant, in order: one check is `checks(state, now, 1, rules)`. */
export function checks(
  state: TenantState | undefined,
  nowMs: number,
  k: number,
  rules: TenantPriorityRules,
): CheckResult {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`checks: k must be a positive integer, got ${k}`);
  const first = isExpired(state, nowMs, rules) ? 0 : state!.count - 1;
  return countsFrom(first, k, nowMs, rules);
}

/** The result of `k` checks whose first one left `firstCount`; each later one subtracts one. */
export function countsFrom(firstCount: number, k: number, nowMs: number, rules: TenantPriorityRules): CheckResult {
  const counts = Array.from({ length: k }, (_, i) => firstCount - i);
  return {
    state: { count: counts[k - 1]!, lastUpdateMs: nowMs },
    counts,
    levels: counts.map((count) => levelOf(count, rules)),
  };
}

/** RabbitMQ delivers a *larger* priority first, so level 1 must map to the largest priority. */
export type PriorityMapping = (level: number) => number;

export const tenMinusLevel: PriorityMapping = (level) => 10 - level;

export function mappingFromTable(table: Readonly<Record<string, number>>): PriorityMapping {
  return (level) => {
    const priority = table[String(level)];
    if (priority === undefined) throw new RangeError(`No AMQP priority is configured for level ${level}`);
    return priority;
  };
}

/** Every level the rules can yield, for validating a mapping up front. */
export function reachableLevels(rules: Pick<TenantPriorityRules, 'thresholds' | 'quietLevel'>): number[] {
  return [...new Set([rules.quietLevel, ...rules.thresholds.map((t) => t.level)])].sort((a, b) => a - b);
}
