import type { FollowUpSettings } from './planning/follow-up';
import type { TargetPlanSettings } from './planning/target-plan';
import type { WeightRule } from './planning/weights';

/**
 * The distributor's settings as its code reads them, translated once from the configuration by
 * the composition root (service.ts `distributorSettings`); no environment-variable name below it.
 */
export interface DistributorSettings extends TargetPlanSettings, FollowUpSettings {
  /** Weight rules by staging queue name (planning/weights.ts). */
  weights: readonly WeightRule[];
  /** How many staging queues move at the same time within a pass. */
  moveConcurrency: number;
  /** Upper bound of a mover's prefetch (it is also never more than the queue's share). */
  maxPrefetch: number;
  /** The pass stops moving this long before the invocation's timeout. */
  safetyMarginMs: number;
  /** A mover that received nothing for this long stops (its queue was drained by someone else). */
  idleStopMs: number;
}
