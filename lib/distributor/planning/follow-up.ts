import type { TargetOutcome } from '../report';

export interface FollowUpSettings {
  /** After a pass that moved messages and left some in staging, the next pass starts this much later. */
  followUpDelayMs: number;
  /** A follow-up after a pass that moved nothing waits twice as long as the last, up to this. */
  followUpMaxDelayMs: number;
}

export interface TargetEnd {
  outcome: TargetOutcome;
  /** Messages the pass measured in the target's staging queues. */
  staged: number;
  moved: number;
  /** Someone asked for a pass while this one held the lease. */
  wanted: boolean;
  /** The delay this pass itself waited, when it was a follow-up. */
  previousDelayMs?: number;
}

/**
 * After a pass held a target's lease: in how many ms the next pass should start, or undefined when
 * the schedule is enough. Pure. Work left after moving → the base delay (the workers make room);
 * nothing moved (target full, or the pass failed) → twice the last delay, up to the maximum, so a
 * target whose workers stopped costs a pass every maximum delay, not a busy loop; a pass wanted
 * meanwhile → at once. A missing target is left to the schedule.
 */
export function followUpDelay(end: TargetEnd, settings: FollowUpSettings): number | undefined {
  if (end.outcome === 'leased-elsewhere' || end.outcome === 'target-missing') return undefined;
  const left = end.staged - end.moved;
  if (end.outcome !== 'failed' && left <= 0) return end.wanted ? 0 : undefined;
  const base = settings.followUpDelayMs;
  if (end.moved > 0) return base;
  const backedOff = Math.max(base, 2 * (end.previousDelayMs ?? 0), 1);
  if (end.wanted && end.outcome !== 'failed') return Math.min(base, backedOff);
  return Math.min(settings.followUpMaxDelayMs, backedOff);
}
