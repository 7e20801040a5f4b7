import { WEIGHT_DECIMALS } from '../config';
import type { PlanQueue } from './plan-queue';
import { tenantShares } from './tenant-shares';
import { byName, waterFill } from './water-fill';

/**
 * `tenant`: a target's room is shared among tenants, then each tenant's part among its queues.
 * `queue`: among staging queues, each its own (the seed's division). `reference`: the reference
 * implementation's ceil(capacity ÷ N), kept for comparison.
 */
export type PlannerMode = 'tenant' | 'queue' | 'reference';

export interface PlanInput {
  /** Messages the target can take this pass. */
  capacity: number;
  queues: readonly PlanQueue[];
  mode: PlannerMode;
  /** Name of the last queue (`tenant` mode: tenant) that got a rotating remainder unit in an earlier pass. */
  rotationCursor?: string;
  /** `tenant` mode: per tenant, the last of its queues that got a remainder unit of its part. */
  innerCursors?: Readonly<Record<string, string>>;
  /**
   * `tenant` mode: `messages` shares messages; `work` shares the queues' `cost` (equal work per
   * tenant over passes, the rounding carried in `deficits`).
   */
  fairBy?: 'messages' | 'work';
  /** `work`: per backlogged tenant, the work it is owed (positive) or was advanced (negative) by rounding. */
  deficits?: Readonly<Record<string, number>>;
}

export interface Plan {
  /** Every input queue, in name order, with how many messages to move from it. */
  shares: { name: string; share: number }[];
  /** Where the next pass starts handing out remainder units (unchanged when there was no remainder). */
  rotationCursor?: string;
  /** `tenant` mode: the inner cursors of the tenants in the plan. */
  innerCursors?: Record<string, string>;
  /** `tenant` mode with `work`: the deficits of the tenants still backlogged after the plan. */
  deficits?: Record<string, number>;
}

/**
 * Divides a target's capacity among its staging queues. Pure.
 *
 * `queue`: weighted max-min fairness by water-filling (water-fill.ts). `tenant`: the same among
 * tenants, then within each tenant's part among its queues (tenant-shares.ts). `reference`: each
 * non-empty queue gets ceil(capacity / N) capped at its depth; the total can exceed capacity and
 * unused shares stay idle.
 */
export function planShares(input: PlanInput): Plan {
  const queues = [...input.queues].sort(byName);
  for (const queue of queues) validate(queue);
  // Whole thousandths keep the water-filling's comparisons exact with decimal weights.
  const scaled = queues.map((q) => ({
    ...q,
    weight: thousandths(q.weight),
    ...(q.tenantWeight === undefined ? {} : { tenantWeight: thousandths(q.tenantWeight) }),
  }));
  const capacity = Math.max(0, Math.floor(input.capacity));
  if (input.mode === 'reference') return referenceShares(scaled, capacity, input.rotationCursor);
  if (input.mode === 'tenant') return tenantShares(scaled, capacity, input);
  const { shares, cursor } = waterFill(scaled, capacity, input.rotationCursor);
  return { shares: queues.map((q) => ({ name: q.name, share: shares.get(q.name)! })), rotationCursor: cursor };
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

function validate(queue: PlanQueue): void {
  if (!Number.isInteger(queue.depth) || queue.depth < 0) {
    throw new RangeError(`Staging queue ${queue.name}: depth must be a non-negative integer, got ${queue.depth}`);
  }
  for (const [what, weight] of [
    ['weight', queue.weight],
    ['tenant weight', queue.tenantWeight ?? 1],
  ] as const) {
    if (!Number.isFinite(weight) || weight < 0) {
      throw new RangeError(`Staging queue ${queue.name}: ${what} must be a number of at least 0, got ${weight}`);
    }
  }
  if (queue.cost !== undefined && !(Number.isFinite(queue.cost) && queue.cost >= 0)) {
    throw new RangeError(`Staging queue ${queue.name}: cost must be a number of at least 0, got ${queue.cost}`);
  }
}

const thousandths = (weight: number) => Math.round(weight * 10 ** WEIGHT_DECIMALS);

export type { PlanQueue };
