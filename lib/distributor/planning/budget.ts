import type { TargetOutcome } from '../report';
import { rotateAfter } from './tenant-shares';

export interface Share {
  name: string;
  share: number;
}

export interface FittedPlan<S extends Share = Share> {
  /** Every input share, in the input order (with its other fields); a deferred one is 0. */
  shares: S[];
  /** Queues whose share waits for the next pass. */
  deferred: number;
  /** When something was deferred: the last queue kept, so that the next pass starts with the first deferred. */
  rotationCursor?: string;
}

/**
 * Keeps the shares a pass can finish within `budgetMs`, taken in rotation order (the queues after
 * `cursor` in name order first), and defers the rest to the next pass, which starts where this
 * one stopped: a pass over more queues than its budget allows never overruns and never starves
 * the queues at the end of the name order. Pure.
 */
export function fitToBudget<S extends Share>(
  shares: readonly S[],
  cursor: string | undefined,
  budgetMs: number,
  costs: MoveCosts,
): FittedPlan<S> {
  const moving = shares.filter((s) => s.share > 0).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const order = rotateAfter(moving, cursor);
  const room = Math.max(0, budgetMs) * Math.max(1, costs.slots);
  const kept = new Set<string>();
  let spent = 0;
  let last: string | undefined;
  for (const s of order) {
    spent += costs.perQueueMs + s.share * costs.perMessageMs;
    if (spent > room) break;
    kept.add(s.name);
    last = s.name;
  }
  const deferred = moving.length - kept.size;
  return {
    shares: shares.map((s) => ({ ...s, share: kept.has(s.name) ? s.share : 0 })),
    deferred,
    ...(deferred > 0 && last !== undefined ? { rotationCursor: last } : {}),
  };
}

/** What a mover costs, as the container has seen: time per staging queue, per message, and movers at once. */
export interface MoveCosts {
  perQueueMs: number;
  perMessageMs: number;
  slots: number;
}

/** The cautious first guess of a new container: a staging queue costs 10 ms (its round trips)… */
export const INITIAL_PER_QUEUE_MS = 10;
/** …and each message 0.5 ms more. */
export const INITIAL_PER_MESSAGE_MS = 0.5;
/** A move of at most this many messages is mostly round trips: it teaches the per-queue cost. */
export const PER_QUEUE_SHARE_MAX = 10;
/** How much one move's time moves the estimate (exponential smoothing; the rest is the old estimate). */
export const LEARNING_RATE = 0.2;

/** The container's estimate of what moves cost, learned move by move over its passes. */
export interface MoveCostModel {
  /** The current estimate (read by the budget when a pass fits its plan). */
  readonly costs: Readonly<MoveCosts>;
  /** A move of `share` messages took `ms`. */
  learn(share: number, ms: number): void;
}

/**
 * Starts at the initial guess and follows what moves take: a small move updates the per-queue
 * cost, a larger one the per-message cost from its time beyond the per-queue cost (never below 0).
 */
export function moveCostModel(slots: number): MoveCostModel {
  const costs: MoveCosts = { perQueueMs: INITIAL_PER_QUEUE_MS, perMessageMs: INITIAL_PER_MESSAGE_MS, slots };
  const smooth = (estimate: number, seen: number) => (1 - LEARNING_RATE) * estimate + LEARNING_RATE * seen;
  return {
    costs,
    learn(share, ms) {
      if (share <= 0) return;
      if (share <= PER_QUEUE_SHARE_MAX) costs.perQueueMs = smooth(costs.perQueueMs, ms);
      else costs.perMessageMs = smooth(costs.perMessageMs, Math.max(0, ms - costs.perQueueMs) / share);
    },
  };
}

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
