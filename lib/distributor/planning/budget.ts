import type { MoveCosts } from './move-costs';
import { rotateAfter } from './rotation-order';

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
