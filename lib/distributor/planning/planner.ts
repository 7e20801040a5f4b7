import { byName, type PlanQueue, tenantShares, waterFill } from './tenant-shares';
import { WEIGHT_DECIMALS } from './weights';

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
 * `queue`: weighted max-min fairness by water-filling (waterFill in tenant-shares.ts). `tenant`: the same among
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

/**
 * Quiet tenants first (docs/distributor.md): the priority a moved message gets from its staging
 * queue's exact backlog, and the reserve of a target's room that only quiet queues may fill.
 */
export interface QuietFirstSettings {
  /**
   * `keep`: every moved message keeps the priority the router stamped (SPEC §1's counter).
   * `backlog`: on a target with `x-max-priority`, a moved message's priority comes from its
   * staging queue's backlog, and quiet queues may fill the reserve.
   */
  movePriority: 'keep' | 'backlog';
  /** A staging queue holding at most this many messages is quiet: top priority, and the reserve. */
  quietBacklog: number;
  /** This percentage of the target's max length only quiet queues may fill (backlog mode). */
  reservePercent: number;
}

export const keepPriorities: QuietFirstSettings = { movePriority: 'keep', quietBacklog: 10, reservePercent: 0 };

/** A target's highest priority: its `x-max-priority` (1–255), else undefined (the target orders none). */
export function targetTopPriority(args: Record<string, unknown> | undefined): number | undefined {
  const top = args?.['x-max-priority'];
  return typeof top === 'number' && Number.isInteger(top) && top >= 1 && top <= 255 ? top : undefined;
}

/**
 * The priority for a message moved from a staging queue holding `backlog` messages: `top` up to
 * `quietBacklog` (a quiet tenant), `top − 1` up to BUSY_FACTOR times that (a tenant with a short
 * queue, still ahead of a flood), `top − 2` above. Three bands, not one per doubling: noisy queues
 * whose backlogs straddled a band edge were served unequally inside the target (the flood bench's
 * five noisy tenants: Jain 0.9665 in a 10 s window with a band per doubling); two bands let a quiet
 * queue that briefly held more than `quietBacklog` fall in with the flood (quiet p99 5.2 s). Pure.
 */
export function backlogPriority(backlog: number, top: number, quietBacklog: number): number {
  if (backlog <= quietBacklog) return top;
  return Math.max(0, backlog <= BUSY_FACTOR * quietBacklog ? top - 1 : top - 2);
}

/** Up to this many times the quiet backlog, a queue is short rather than flooding. */
export const BUSY_FACTOR = 16;

/** The percentage of a target's max length only quiet queues may fill: none unless in backlog mode. */
export const reservePercent = (settings: QuietFirstSettings): number =>
  settings.movePriority === 'backlog' ? settings.reservePercent : 0;

/**
 * Quiet tenants first (backlog mode): quiet tenants' queues (weight > 0, tenant's backlog ≤
 * quietBacklog) take what they hold from the whole `room` (the reserve and the room below the
 * refill threshold too) before the fair plan shares the rest, water-filled among them when it does
 * not all fit. Served before, not after: in a buffer a few messages deep the reserve rounds to
 * nothing, and a quiet queue's fair share of one free slot left it waiting seconds (issue 36). Pure.
 */
export function quietShares(
  queues: readonly (PlanQueue & { backlog: number })[],
  room: number,
  quietBacklog: number,
  rotationCursor?: string,
): Plan {
  const wanting = queues.filter((q) => q.weight > 0 && q.backlog <= quietBacklog && q.depth > 0);
  if (room <= 0 || wanting.length === 0) return { shares: [], ...(rotationCursor ? { rotationCursor } : {}) };
  return planShares({ capacity: room, queues: wanting, mode: 'queue', rotationCursor });
}
