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
