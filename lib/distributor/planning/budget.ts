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
