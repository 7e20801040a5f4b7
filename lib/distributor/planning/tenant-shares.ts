interface TenantOptions {
  rotationCursor?: string;
  innerCursors?: Readonly<Record<string, string>>;
  fairBy?: 'messages' | 'work';
  deficits?: Readonly<Record<string, number>>;
}

interface Tenant {
  name: string;
  /** What its served queues (depth and weight above 0) hold. */
  depth: number;
  weight: number;
  /** Work per message, over its served queues by their weights. */
  cost: number;
  served: PlanQueue[];
}

/** A tenant may be owed or advanced at most this many of its messages' work (the rounding's carry). */
const DEFICIT_BOUND_MESSAGES = 2;

/** A deficit as carried: within ± DEFICIT_BOUND_MESSAGES messages of `cost`, to 3 decimals. */
export function boundedDeficit(deficit: number, cost: number): number {
  const bound = DEFICIT_BOUND_MESSAGES * cost;
  return Math.round(Math.max(-bound, Math.min(bound, deficit)) * 1000) / 1000;
}

/**
 * Two-level shares (docs/distributor.md "Plan"): the capacity is water-filled among tenants (by
 * their weights; remainder units rotate after `rotationCursor`), then each tenant's part among its
 * queues (by their weights; the tenant's own cursor in `innerCursors`). With `fairBy: 'work'` the
 * tenant level shares work instead of messages: a tenant's message weighs its cost, and what
 * rounding gives or withholds is carried to the next pass in `deficits`, so a tenant of large
 * messages gets its share over passes even when its share of one pass is below one message. Pure.
 */
export function tenantShares(queues: readonly PlanQueue[], capacity: number, options: TenantOptions) {
  const tenants = groupTenants(queues);
  const work = options.fairBy === 'work';
  const parts = work
    ? workParts(tenants, capacity, options.deficits ?? {})
    : { ...messageParts(tenants, capacity, options.rotationCursor), entitled: undefined };
  const shares = new Map(queues.map((q) => [q.name, 0]));
  const innerCursors: Record<string, string> = {};
  for (const tenant of tenants) {
    const kept = options.innerCursors?.[tenant.name];
    const inner = waterFill(tenant.served, parts.shares.get(tenant.name) ?? 0, kept);
    for (const [name, share] of inner.shares) shares.set(name, share);
    if (inner.cursor !== undefined) innerCursors[tenant.name] = inner.cursor;
  }
  const deficits = parts.entitled && carriedDeficits(tenants, shares, parts.shares, parts.entitled, options.deficits);
  return {
    shares: queues.map((q) => ({ name: q.name, share: shares.get(q.name)! })),
    ...(parts.cursor === undefined ? {} : { rotationCursor: parts.cursor }),
    ...(Object.keys(innerCursors).length > 0 ? { innerCursors } : {}),
    ...(deficits && Object.keys(deficits).length > 0 ? { deficits } : {}),
  };
}

/** The tenants of the queues, in name order; a queue without a tenant is a tenant of its own. */
function groupTenants(queues: readonly PlanQueue[]): Tenant[] {
  const tenants = new Map<string, Tenant>();
  for (const q of queues) {
    const name = q.tenant ?? q.name;
    let tenant = tenants.get(name);
    if (!tenant) {
      tenant = { name, depth: 0, weight: q.tenantWeight ?? 1000, cost: 0, served: [] };
      tenants.set(name, tenant);
    }
    if (q.depth > 0 && q.weight > 0) {
      tenant.served.push(q);
      tenant.depth += q.depth;
    }
  }
  for (const tenant of tenants.values()) {
    const weights = tenant.served.reduce((n, q) => n + q.weight, 0);
    tenant.cost = weights > 0 ? tenant.served.reduce((n, q) => n + q.weight * costOf(q), 0) / weights : 1;
  }
  return [...tenants.values()].sort(byName);
}

function messageParts(tenants: readonly Tenant[], capacity: number, cursor?: string) {
  const filled = waterFill(tenants, capacity, cursor);
  return { shares: filled.shares, cursor: filled.cursor };
}

/**
 * Tenant parts equal in work: each backlogged tenant is entitled to the fractional water-filling
 * of the capacity in which its messages weigh weight ÷ cost, plus what it is owed; parts are the
 * whole messages nearest to that, the capacity used in full (units to the most owed first).
 */
function workParts(tenants: readonly Tenant[], capacity: number, deficits: Readonly<Record<string, number>>) {
  const active = tenants.filter((t) => t.depth > 0 && t.weight > 0);
  const total = Math.min(
    capacity,
    active.reduce((n, t) => n + t.depth, 0),
  );
  const fill = fractionalFill(
    active.map((t) => ({ depth: t.depth, rate: t.weight / t.cost })),
    total,
  );
  const want = active.map((t, i) => fill[i]! + (Object.hasOwn(deficits, t.name) ? deficits[t.name]! : 0) / t.cost);
  const parts = active.map((t, i) => Math.min(t.depth, Math.max(0, Math.floor(want[i]! + 1e-9))));
  let sum = parts.reduce((a, b) => a + b, 0);
  const owed = (i: number) => want[i]! - parts[i]!;
  while (sum !== total) {
    const up = sum < total;
    let pick = -1;
    for (let i = 0; i < active.length; i++) {
      if (up ? parts[i]! >= active[i]!.depth : parts[i]! <= 0) continue;
      if (pick < 0 || (up ? owed(i) > owed(pick) : owed(i) < owed(pick))) pick = i;
    }
    parts[pick]! += up ? 1 : -1;
    sum += up ? 1 : -1;
  }
  return {
    shares: new Map(active.map((t, i) => [t.name, parts[i]!])),
    cursor: undefined,
    entitled: new Map(active.map((t, i) => [t.name, fill[i]! * t.cost])),
  };
}

/**
 * What each tenant still backlogged after the plan is owed: its deficit, plus the work it was
 * entitled to, less the work of the messages planned from its queues; bounded, rounded. A tenant
 * whose queues the plan empties starts afresh next time (as deficit round robin does).
 */
function carriedDeficits(
  tenants: readonly Tenant[],
  shares: ReadonlyMap<string, number>,
  parts: ReadonlyMap<string, number>,
  entitled: ReadonlyMap<string, number>,
  deficits: Readonly<Record<string, number>> = {},
): Record<string, number> {
  const carried: Record<string, number> = {};
  for (const tenant of tenants) {
    const part = parts.get(tenant.name) ?? 0;
    if (part >= tenant.depth || !entitled.has(tenant.name)) continue;
    const got = tenant.served.reduce((n, q) => n + (shares.get(q.name) ?? 0) * costOf(q), 0);
    const before = Object.hasOwn(deficits, tenant.name) ? deficits[tenant.name]! : 0;
    const next = boundedDeficit(before + entitled.get(tenant.name)! - got, tenant.cost);
    if (next !== 0) carried[tenant.name] = next;
  }
  return carried;
}

const costOf = (q: PlanQueue) => (q.cost !== undefined && q.cost > 0 ? q.cost : 1);

/** A non-empty staging queue as the planner sees it. */
export interface PlanQueue {
  name: string;
  /** Messages ready in the queue; the planner never gives a queue more than this. */
  depth: number;
  /**
   * 0–1000 with at most WEIGHT_DECIMALS decimals; a queue of weight 2 gets twice the share of a
   * queue of weight 1 when both are backlogged, a queue of weight 0 gets none (others share its room).
   * In `tenant` mode it weighs the queue within its tenant.
   */
  weight: number;
  /** `tenant` mode: the queue's tenant (every queue naming it shares one part); absent, the queue is a tenant of its own. */
  tenant?: string;
  /** `tenant` mode: the tenant's weight (as `weight`, read from its first queue); absent, 1. */
  tenantWeight?: number;
  /** Work a message of the queue brings, in the fair-by unit (bytes); absent or 0, 1. Used with `fairBy: 'work'`. */
  cost?: number;
}

/**
 * Weighted max-min fairness over `items` (in name order, integer weights): items that hold less
 * than their share get all they hold and the rest is shared again among the others; the remaining
 * items get floor(level × weight) and the units left over (fewer than the number of those items)
 * go one each to the items after `rotationCursor` in name order, so that with capacity smaller
 * than the number of items every item is served within a bounded number of passes. Weight 0 gets
 * nothing (upstream's fast lane). Returns the cursor moved to the last item that got a unit
 * (unchanged without a remainder). Pure.
 */
export function waterFill(
  items: readonly { name: string; depth: number; weight: number }[],
  capacity: number,
  rotationCursor?: string,
): { shares: Map<string, number>; cursor?: string } {
  const share = new Map(items.map((q) => [q.name, 0]));
  let remaining = capacity;
  let unsaturated = items.filter((q) => q.depth > 0 && q.weight > 0);

  // An item that holds no more than the current level × its weight is filled and leaves; the
  // level rises for the others. Integer comparisons keep it exact.
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

  // Every unsaturated item holds more than its floor, so each can take one more unit, and there
  // are fewer units left than such items.
  let cursor = rotationCursor;
  if (leftOver > 0) {
    for (const q of rotateAfter(unsaturated, rotationCursor).slice(0, leftOver)) {
      share.set(q.name, share.get(q.name)! + 1);
      cursor = q.name;
    }
  }
  return { shares: share, ...(cursor === undefined ? {} : { cursor }) };
}

/**
 * Water-filling without rounding: `total` (at most the items' depths summed) shared so that every
 * item either gets all it holds or `level × rate`, the same level for all that do not. Pure.
 */
export function fractionalFill(items: readonly { depth: number; rate: number }[], total: number): number[] {
  const result = items.map(() => 0);
  const order = items
    .map((_, i) => i)
    .sort((a, b) => items[a]!.depth / items[a]!.rate - items[b]!.depth / items[b]!.rate);
  let remaining = total;
  let rates = sum(items.map((item) => item.rate));
  for (const [at, i] of order.entries()) {
    const { depth, rate } = items[i]!;
    if (depth * rates <= remaining * rate) {
      result[i] = depth;
      remaining -= depth;
      rates -= rate;
      continue;
    }
    for (const j of order.slice(at)) result[j] = (remaining * items[j]!.rate) / rates;
    break;
  }
  return result;
}

/** Name order, as the plans list their queues and the rotation runs. */
export const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * `items` (in name order) starting after `cursor`: the ones whose name comes after it, then the
 * ones from the start up to it. Without a cursor, or when none comes after it, the name order
 * itself. The planner hands out remainder units in this order and the budget keeps shares in it,
 * so both resume where the last pass stopped. Pure.
 */
export function rotateAfter<T extends { name: string }>(items: readonly T[], cursor: string | undefined): T[] {
  const start = items.findIndex((item) => cursor === undefined || item.name > cursor);
  return start <= 0 ? [...items] : [...items.slice(start), ...items.slice(0, start)];
}
