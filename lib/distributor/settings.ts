import type { BufferSettings } from './planning/buffer';
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
  /** Targets a pass works on at once (each takes its lease first, so lease requests are bounded too). */
  targetConcurrency: number;
  /** The target buffer (planning/buffer.ts), for every target whose settings do not turn it off. */
  buffer: BufferSettings;
}

/** How executions follow the work board (docs/distributor.md "Run model"). */
export interface RunModelSettings {
  /** Executions in flight at most, whatever the number of busy targets. */
  maxExecutions: number;
  /** With nothing due now, an execution waits for a target due within this long, and ends otherwise. */
  waitBoundMs: number;
  /** While it waits, it reads the board this often (requests written meanwhile are served then). */
  boardPollMs: number;
  /** The backstop lists the vhost at most this often over every execution. */
  backstopIntervalMs: number;
  /** A target's registry read and shape serve the container's later passes this long. */
  stagingCacheMs: number;
  safetyMarginMs: number;
}
