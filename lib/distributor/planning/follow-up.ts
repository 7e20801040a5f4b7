import type { TargetOutcome } from '../report';

export interface FollowUpSettings {
  /** The next pass of a target that kept work staged, when its drain rate is not known yet. */
  followUpDelayMs: number;
  /** A target that moved nothing waits twice as long as the last time, up to this; no due time is later. */
  followUpMaxDelayMs: number;
  /** A target whose free room is below this percentage of its max length is left alone. */
  refillThresholdPercent: number;
}

export interface TargetEnd {
  outcome: TargetOutcome;
  /** Messages the pass measured in the target's staging queues. */
  staged: number;
  moved: number;
  /** Set aside in the parking queue: gone from staging, not in the target. */
  parked?: number;
  /** The target's ready depth before moving, and its max length, when the pass read them. */
  depth?: number;
  maxLength?: number;
  /** Messages a ms the target lost to its consumers since the execution's last pass over it. */
  drainPerMs?: number;
  /** The delay this execution gave the target last time. */
  previousDelayMs?: number;
}

/**
 * In how many ms a target's next pass is due, or undefined when nothing is left staged. Pure.
 * Driven by room: from the depth the pass left and the measured drain rate, when the free room
 * will again pass the refill threshold (the smallest refill worth a pass). Without a drain rate,
 * after moving: the base delay; nothing moved (target full and not draining, the pass failed, or
 * the target refused what it had room for): twice the last delay, up to the maximum, so a target whose workers stopped costs a pass every
 * maximum delay, not a busy loop. A missing target or one another execution serves gets none.
 */
export function followUpDelay(end: TargetEnd, settings: FollowUpSettings): number | undefined {
  if (end.outcome === 'leased-elsewhere' || end.outcome === 'target-missing') return undefined;
  const left = end.staged - end.moved - (end.parked ?? 0);
  if (end.outcome !== 'failed' && left <= 0) return undefined;
  const base = settings.followUpDelayMs;
  const max = settings.followUpMaxDelayMs;
  const draining = end.drainPerMs !== undefined && end.drainPerMs > 0;
  // A pass that moved nothing into a target with room (refused, cut short) backs off instead.
  const roomDecides = end.outcome !== 'failed' && (end.moved > 0 || end.outcome === 'below-threshold');
  if (roomDecides && draining && end.depth !== undefined && end.maxLength !== undefined) {
    const refillDepth = end.maxLength * (1 - settings.refillThresholdPercent / 100);
    const untilRefill = (end.depth + end.moved - refillDepth) / end.drainPerMs!;
    return Math.min(max, Math.max(0, Math.ceil(untilRefill)));
  }
  if (end.outcome !== 'failed' && end.moved > 0) return base;
  return Math.min(max, Math.max(base, 2 * (end.previousDelayMs ?? 0), 1));
}
