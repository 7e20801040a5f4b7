import type { QueueInfo } from '../../rabbitmq/management';
import { DISCRIMINATOR_SEPARATOR, parseStagingQueueName, STAGING_SEPARATOR } from '../../staging/staging-names';
import type { PlannerMode } from './planner';
import { boundedDeficit } from './tenant-shares';
import type { QueueWeight } from './weights';
import { byWork, type FairBy } from './weights';

/**
 * The tenant a staging queue is planned under: `target»/tenant` for `target»/tenant[/workflow…]`.
 * A tenant-less queue `target»/workflow` reads as tenant `workflow`, as the tenant controls read it
 * (the name cannot tell them apart); a name without a discriminator is a tenant of its own.
 */
export function tenantKey(queueName: string): string {
  const parts = parseStagingQueueName(queueName);
  return parts?.tenant === undefined
    ? queueName
    : parts.target + STAGING_SEPARATOR + DISCRIMINATOR_SEPARATOR + parts.tenant;
}

interface Sizes {
  planner: PlannerMode;
  fairBy?: FairBy;
  /** Body bytes of a message per staging queue, as listed. */
  queueBytes?: Readonly<Record<string, number>>;
  /** Body bytes of a message over the target's staging queues, as listed (0 when unknown). */
  stagedMessageBytes: number;
  /** Declared cost: per tenant, the cost of a message learned from those moved (chargeMoves, below). */
  costs?: Readonly<Record<string, number>>;
}

/**
 * The non-empty staging queues as the planner takes them: each with its tenant, its weight for the
 * planner (`tenant`: within its tenant, 0 when the tenant weighs 0; else its own), its tenant's
 * weight, its cost when fair by work (bytes or declared), and `backlog`: what its tenant's served queues hold on the
 * target, so that quiet is a tenant's property, not a queue's. Pure.
 */
export function stagedQueues(
  staging: readonly { name: string; depth: number }[],
  sizes: Sizes,
  weight: (queue: string) => QueueWeight,
) {
  const tenantMode = sizes.planner === 'tenant';
  const cost = costOf(sizes);
  const queues = staging
    .filter((q) => q.depth > 0)
    .map((q) => {
      const w = weight(q.name);
      return {
        ...q,
        weight: tenantMode ? (w.tenant > 0 ? w.workflow : 0) : w.queue,
        tenant: tenantKey(q.name),
        tenantWeight: w.tenant,
        ...(cost ? { cost: cost(q.name) } : {}),
      };
    });
  const backlogs = new Map<string, number>();
  for (const q of queues) if (q.weight > 0) backlogs.set(q.tenant, (backlogs.get(q.tenant) ?? 0) + q.depth);
  return queues.map((q) => ({ ...q, backlog: backlogs.get(q.tenant) ?? q.depth }));
}

/** Each queue's work per message in the fair-by unit; undefined when shares are by messages. */
function costOf(sizes: Sizes): ((queue: string) => number) | undefined {
  if (sizes.fairBy?.unit === 'bytes') return bytesOf(sizes);
  if (sizes.fairBy?.unit === 'declared') return declaredOf(sizes.costs ?? {}, sizes.fairBy.missing);
  return undefined;
}

/**
 * A queue's declared cost: its tenant's as learned, else the mean of the costs learned on the
 * target (a new tenant is taken for an average one until its first moves), else `missing`.
 */
function declaredOf(costs: Readonly<Record<string, number>>, missing: number): (queue: string) => number {
  const known = Object.values(costs);
  const fallback = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : missing;
  return (queue) => {
    const tenant = tenantKey(queue);
    return Object.hasOwn(costs, tenant) ? costs[tenant]! : fallback;
  };
}

/**
 * A queue's message size: as listed, else the target's staged average, else the mean of the sizes
 * listed, else 1 (every queue alike: shares by messages).
 */
function bytesOf(sizes: Sizes): (queue: string) => number {
  const listed = Object.values(sizes.queueBytes ?? {}).filter((b) => b > 0);
  const fallback =
    sizes.stagedMessageBytes > 0
      ? sizes.stagedMessageBytes
      : listed.length > 0
        ? listed.reduce((a, b) => a + b, 0) / listed.length
        : 1;
  return (queue) => {
    const bytes = sizes.queueBytes && Object.hasOwn(sizes.queueBytes, queue) ? sizes.queueBytes[queue]! : 0;
    return bytes > 0 ? bytes : fallback;
  };
}

export type { QueueWeight };

/**
 * What the staging queues hold that the planner may move: a queue weighing 0 at a level it is
 * planned by (paused) waits for its tenant to be resumed, not for a follow-up.
 */
export function stagedDepth(
  staging: readonly { name: string; depth: number }[],
  weight: (queue: string) => QueueWeight,
  planner: PlannerMode,
): number {
  const weighs = (w: QueueWeight) => (planner === 'tenant' ? w.tenant > 0 && w.workflow > 0 : w.queue > 0);
  return staging.reduce((n, q) => n + (weighs(weight(q.name)) ? q.depth : 0), 0);
}

/** One staging queue's share as planned and as moved, for the work it is charged. */
export interface MovedShare {
  /** The queue's tenant (tenant-backlog.ts `tenantKey`). */
  tenant: string;
  /** Messages it held when planned. */
  depth: number;
  /** The work of one of its messages the plan counted. */
  cost: number;
  planned: number;
  moved: number;
  /** The work of the messages moved (weights.ts `messageWork`). */
  work: number;
}

/** What a target's plan carries between passes when shares are equal in work (RotationState). */
export interface WorkCarry {
  /** Per backlogged tenant, the work it is owed (positive) or was advanced. */
  deficits?: Record<string, number>;
  /** Per tenant, the work of one of its messages, learned from the messages moved (declared cost). */
  costs?: Record<string, number>;
}

/** How many moved messages weigh as much as the cost learned so far: a new figure moves it by moved ÷ (moved + this). */
const LEARNED_COST_MESSAGES = 20;

/**
 * The carry after the moves: each tenant still backlogged is charged the work its messages really
 * brought instead of what the plan counted (a share planned but not moved stays owed; a message
 * larger than its queue's average is paid back), so shares are equal in work over passes whatever
 * the plan's estimate. With `learn`, each tenant's cost moves toward what its moved messages
 * declared; tenants not in `tenants` (no staging queue on the target any more) are dropped. Pure.
 */
export function chargeMoves(
  carry: WorkCarry,
  moves: readonly MovedShare[],
  learn: { tenants: ReadonlySet<string> } | undefined,
): WorkCarry {
  const totals = new Map<string, { planned: number; moved: number; work: number; left: number; cost: number }>();
  for (const m of moves) {
    const t = totals.get(m.tenant) ?? { planned: 0, moved: 0, work: 0, left: 0, cost: m.cost };
    t.planned += m.planned * m.cost;
    t.moved += m.moved;
    t.work += m.work;
    t.left += Math.max(0, m.depth - m.moved);
    totals.set(m.tenant, t);
  }
  const costs = learn ? learnedCosts(carry.costs ?? {}, totals, learn.tenants) : undefined;
  const deficits: Record<string, number> = { ...carry.deficits };
  for (const [tenant, t] of totals) {
    if (t.left === 0) {
      delete deficits[tenant];
      continue;
    }
    const before = Object.hasOwn(deficits, tenant) ? deficits[tenant]! : 0;
    const cost = costs?.[tenant] ?? t.cost;
    const next = boundedDeficit(before + t.planned - t.work, cost);
    if (next === 0) delete deficits[tenant];
    else deficits[tenant] = next;
  }
  return {
    ...(Object.keys(deficits).length > 0 ? { deficits } : {}),
    ...(costs && Object.keys(costs).length > 0 ? { costs } : {}),
  };
}

function learnedCosts(
  known: Readonly<Record<string, number>>,
  totals: ReadonlyMap<string, { moved: number; work: number }>,
  tenants: ReadonlySet<string>,
): Record<string, number> {
  const costs: Record<string, number> = {};
  for (const tenant of tenants) {
    const before = Object.hasOwn(known, tenant) ? known[tenant] : undefined;
    const t = totals.get(tenant);
    if (!t || t.moved === 0) {
      if (before !== undefined) costs[tenant] = before;
      continue;
    }
    const seen = t.work / t.moved;
    const next = before === undefined ? seen : before + ((seen - before) * t.moved) / (t.moved + LEARNED_COST_MESSAGES);
    costs[tenant] = Number(next.toPrecision(3));
  }
  return costs;
}

/** A staging queue as planned and moved (target-pass.ts): its plan's cost per message, the movers' work. */
export interface MovedQueue {
  name: string;
  depth: number;
  planned: number;
  moved: number;
  cost?: number;
  work?: number;
}

/**
 * The rotation to keep after a refill's moves: the plan's cursors, and fair by work its deficits
 * charged with the moves (a declared cost learned for the tenants staging on the target). Pure.
 */
export function rotationAfterMoves(
  fairBy: FairBy | undefined,
  measured: { staging: readonly { name: string }[]; costs?: Readonly<Record<string, number>> },
  plan: { rotationCursor?: string; innerCursors?: Record<string, string>; deficits?: Record<string, number> },
  moved: readonly MovedQueue[],
) {
  const { rotationCursor, innerCursors, deficits } = plan;
  const cursors = {
    ...(rotationCursor === undefined ? {} : { rotationCursor }),
    ...(innerCursors ? { innerCursors } : {}),
  };
  if (!byWork(fairBy)) return { ...cursors, ...(deficits ? { deficits } : {}) };
  const carry = chargeMoves(
    { ...(deficits ? { deficits } : {}), ...(measured.costs ? { costs: { ...measured.costs } } : {}) },
    moved.map((q) => ({
      tenant: tenantKey(q.name),
      depth: q.depth,
      cost: q.cost ?? 1,
      planned: q.planned,
      moved: q.moved,
      work: q.work ?? 0,
    })),
    fairBy.unit === 'declared' ? { tenants: new Set(measured.staging.map((q) => tenantKey(q.name))) } : undefined,
  );
  return { ...cursors, ...carry };
}

/** A target with the staging queues that, by the management listing, hold messages. */
export interface TargetGroup {
  target: string;
  /** The target as listed, or undefined if the listing has no queue of that name. */
  targetQueue?: QueueInfo;
  /** Names of its staging queues the listing shows with ready messages (or all, see groupByTarget), in name order. */
  staging: string[];
  /** Body bytes of a message in those staging queues, on average as listed (0 when the listing has no bytes). */
  stagedMessageBytes: number;
  /** Body bytes of a message per staging queue, on average as listed (queues listed with bytes only). */
  queueBytes?: Record<string, number>;
}

/**
 * Groups one management listing by target. Pure. The staging queues of the `listedEmptyToo` targets
 * are kept whatever their listed count (a pass asked for them reads them all). The listing's counts lag about 5 s, so they
 * only decide which staging queues are worth a look: the pass reads exact depths over AMQP.
 */
export function groupByTarget(
  queues: readonly QueueInfo[],
  listedEmptyToo: ReadonlySet<string> = new Set(),
): TargetGroup[] {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const groups = new Map<string, TargetGroup>();
  for (const queue of queues) {
    const target = parseStagingQueueName(queue.name)?.target;
    if (target === undefined || (queue.messages_ready <= 0 && !listedEmptyToo.has(target))) continue;
    let group = groups.get(target);
    if (!group) {
      group = { target, targetQueue: byName.get(target), staging: [], stagedMessageBytes: 0 };
      groups.set(target, group);
    }
    group.staging.push(queue.name);
  }
  for (const group of groups.values()) {
    group.staging.sort();
    const listed = group.staging.map((name) => byName.get(name)!);
    const messages = listed.reduce((n, q) => n + q.messages_ready, 0);
    const bytes = listed.reduce((n, q) => n + (q.message_bytes_ready ?? 0), 0);
    group.stagedMessageBytes = messages > 0 ? bytes / messages : 0;
    const sized = listed.filter((q) => q.messages_ready > 0 && (q.message_bytes_ready ?? 0) > 0);
    if (sized.length > 0) group.queueBytes = Object.fromEntries(sized.map((q) => [q.name, averageBytes(q)]));
  }
  return [...groups.values()].sort((a, b) => (a.target < b.target ? -1 : 1));
}

const averageBytes = (q: QueueInfo) => (q.message_bytes_ready ?? 0) / q.messages_ready;
