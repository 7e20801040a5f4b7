import type { DistributorConfig } from '../config/distributor';
import { targetCapacity } from './capacity';
import { type PlanQueue, planShares } from './planner';
import type { Rotation } from './stores/rotation-store';

export type TargetPlanSettings = Pick<
  DistributorConfig,
  | 'DISTRIBUTOR_PLANNER'
  | 'DISTRIBUTOR_DEFAULT_MAX_LENGTH'
  | 'DISTRIBUTOR_TARGETS'
  | 'DISTRIBUTOR_REFILL_THRESHOLD_PERCENT'
  | 'DISTRIBUTOR_MISSING_TARGET'
  | 'DISTRIBUTOR_NEW_TARGET_ARGUMENTS'
>;

/** What a pass measured of one target while holding its lease: exact depths (AMQP) and the rotation. */
export interface TargetMeasurement {
  target: string;
  /** The target's `x-max-length` argument as listed; undefined when the listing has no such queue. */
  maxLengthArgument: unknown;
  /** Messages ready in the target; undefined when it does not exist. */
  depth: number | undefined;
  /** Each staging queue with its ready messages (0 when it is gone). */
  staging: readonly { name: string; depth: number }[];
  /** Where the rotation of remainder units stands (DistributorState.readRotation). */
  rotation: Rotation;
  /** The length tuning set for this pass (DISTRIBUTOR_TARGETS tunedLength, mode apply). */
  tunedMaxLength?: number;
}

/** Nothing moves: the target does not exist and DISTRIBUTOR_MISSING_TARGET=skip. */
export interface SkipMissingTarget {
  outcome: 'target-missing';
}

export interface TargetShares {
  /** Messages may move (`distributed`), or the target's room is below the refill threshold. */
  outcome: 'distributed' | 'below-threshold';
  /** Declare the target first, with these arguments (it is missing and DISTRIBUTOR_MISSING_TARGET=create). */
  createWith?: Record<string, unknown>;
  maxLength: number;
  depth: number;
  capacity: number;
  /** The non-empty staging queues, with their weights. */
  queues: PlanQueue[];
  /** How many messages to move from each queue, in name order; empty when nothing moves. */
  shares: { name: string; share: number }[];
  /** The rotation cursor to store, when the plan moved it. */
  rotationCursor?: string;
}

export type TargetPlan = SkipMissingTarget | TargetShares;

/** What to do with one target this pass, from what was measured. Pure. */
export function planTarget(
  measured: TargetMeasurement,
  settings: TargetPlanSettings,
  weight: (queue: string) => number,
): TargetPlan {
  const configured = settings.DISTRIBUTOR_TARGETS[measured.target];
  let maxLengthArgument = measured.maxLengthArgument;
  let createWith: Record<string, unknown> | undefined;
  if (measured.depth === undefined) {
    if (settings.DISTRIBUTOR_MISSING_TARGET === 'skip') return { outcome: 'target-missing' };
    createWith = configured?.arguments ?? settings.DISTRIBUTOR_NEW_TARGET_ARGUMENTS;
    maxLengthArgument = createWith['x-max-length'];
  }
  const depth = measured.depth ?? 0;
  const capacity = targetCapacity({
    maxLengthArgument,
    configuredMaxLength: configured?.maxLength,
    defaultMaxLength: settings.DISTRIBUTOR_DEFAULT_MAX_LENGTH,
    ...(measured.tunedMaxLength === undefined ? {} : { tunedMaxLength: measured.tunedMaxLength }),
    depth,
    refillThresholdPercent: settings.DISTRIBUTOR_REFILL_THRESHOLD_PERCENT,
  });
  const plan: TargetShares = {
    outcome: capacity.belowThreshold ? 'below-threshold' : 'distributed',
    ...(createWith ? { createWith } : {}),
    maxLength: capacity.maxLength,
    depth,
    capacity: capacity.capacity,
    queues: [],
    shares: [],
  };
  if (capacity.capacity === 0) return plan;

  plan.queues = measured.staging.filter((q) => q.depth > 0).map((q) => ({ ...q, weight: weight(q.name) }));
  const shares = planShares({
    capacity: capacity.capacity,
    queues: plan.queues,
    mode: settings.DISTRIBUTOR_PLANNER,
    rotationCursor: measured.rotation.cursor,
  });
  plan.shares = shares.shares;
  if (shares.rotationCursor !== undefined && shares.rotationCursor !== measured.rotation.cursor) {
    plan.rotationCursor = shares.rotationCursor;
  }
  return plan;
}
