import { WEIGHT_DECIMALS } from '../../config/distributor';
import { rotateAfter } from './rotation-order';

/** A non-empty staging queue as the planner sees it. */
export interface PlanQueue {
  name: string;
  /** Messages ready in the queue; the planner never gives a queue more than this. */
  depth: number;
  /**
   * 0–1000 with at most WEIGHT_DECIMALS decimals; a queue of weight 2 gets twice the share of a
   * queue of weight 1 when both are backlogged, a queue of weight 0 gets none (others share its room).
   */
  weight: number;
}

export type PlannerMode = 'fair' | 'reference';

export interface PlanInput {
  /** Messages the target can take this pass. */
  capacity: number;
  queues: readonly PlanQueue[];
  mode: PlannerMode;
  /** Name of the last queue that got a rotating remainder unit in an earlier pass. */
  rotationCursor?: string;
}

export interface Plan {
  /** Every input queue, in name order, with how many messages to move from it. */
  shares: { name: string; share: number }[];
  /** Where the next pass starts handing out remainder units (unchanged when there was no remainder). */
  rotationCursor?: string;
}

/**
 * Divides a target's capacity among its staging queues. Pure.
 *
 * `fair`: weighted max-min fairness by water-filling. Queues that hold less than their share get
 * all they hold and the rest is shared again among the others; the remaining queues get
 * floor(level × weight) and the units left over (fewer than the number of those queues) go one
 * each to the queues after `rotationCursor` in name order, so that with capacity smaller than
 * the number of queues every queue is served within a bounded number of passes.
 *
 * `reference`: what the reference implementation does, kept for comparison: each non-empty queue
 * gets ceil(capacity / N) capped at its depth; the total can exceed capacity and unused shares
 * stay idle.
 */
export function planShares(input: PlanInput): Plan {
  const queues = [...input.queues].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const queue of queues) validate(queue);
  // Whole thousandths keep the water-filling's comparisons exact with decimal weights.
  const scaled = queues.map((q) => ({ ...q, weight: Math.round(q.weight * 10 ** WEIGHT_DECIMALS) }));
  const capacity = Math.max(0, Math.floor(input.capacity));
  if (input.mode === 'reference') return referenceShares(scaled, capacity, input.rotationCursor);
  return fairShares(scaled, capacity, input.rotationCursor);
}

function referenceShares(queues: PlanQueue[], capacity: number, rotationCursor?: string): Plan {
  const served = (q: PlanQueue) => q.depth > 0 && q.weight > 0;
  const nonEmpty = queues.filter(served).length;
  const each = nonEmpty === 0 ? 0 : Math.ceil(capacity / nonEmpty);
  return {
    shares: queues.map((q) => ({ name: q.name, share: served(q) ? Math.min(q.depth, each) : 0 })),
    rotationCursor,
  };
}

function fairShares(queues: PlanQueue[], capacity: number, rotationCursor?: string): Plan {
  const share = new Map(queues.map((q) => [q.name, 0]));
  let remaining = capacity;
  // Weight 0 gets no share (upstream's fast lane); the others share its room.
  let unsaturated = queues.filter((q) => q.depth > 0 && q.weight > 0);

  // Water-filling: a queue that holds no more than the current level × its weight is filled and
  // leaves; the level rises for the others. Integer comparisons keep it exact.
  for (;;) {
    const totalWeight = sum(unsaturated.map((q) => q.weight));
    const filled = new Set(unsaturated.filter((q) => q.depth * totalWeight <= remaining * q.weight));
    if (filled.size === 0 || remaining === 0) break;
    for (const q of filled) {
      share.set(q.name, q.depth);
      remaining -= q.depth;
    }
    unsaturated = unsaturated.filter((q) => !filled.has(q));
    if (unsaturated.length === 0) break;
  }

  const totalWeight = sum(unsaturated.map((q) => q.weight));
  let leftOver = remaining;
  for (const q of unsaturated) {
    const base = Math.floor((remaining * q.weight) / totalWeight);
    share.set(q.name, base);
    leftOver -= base;
  }

  // Every unsaturated queue holds more than its floor, so each can take one more unit, and there
  // are fewer units left than such queues.
  let cursor = rotationCursor;
  if (leftOver > 0) {
    for (const q of rotateAfter(unsaturated, rotationCursor).slice(0, leftOver)) {
      share.set(q.name, share.get(q.name)! + 1);
      cursor = q.name;
    }
  }
  return { shares: queues.map((q) => ({ name: q.name, share: share.get(q.name)! })), rotationCursor: cursor };
}

function validate(queue: PlanQueue): void {
  if (!Number.isInteger(queue.depth) || queue.depth < 0) {
    throw new RangeError(`Staging queue ${queue.name}: depth must be a non-negative integer, got ${queue.depth}`);
  }
  if (!Number.isFinite(queue.weight) || queue.weight < 0) {
    throw new RangeError(`Staging queue ${queue.name}: weight must be a number of at least 0, got ${queue.weight}`);
  }
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
