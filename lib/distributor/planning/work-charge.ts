import { byWork, type FairBy } from './fair-by';
import { tenantKey } from './tenant-backlog';
import { boundedDeficit } from './tenant-shares';

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
  /** The work of the messages moved (planning/fair-by.ts `messageWork`). */
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
