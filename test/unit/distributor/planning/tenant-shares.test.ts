import fc from 'fast-check';
import { type PlanQueue, planShares } from '../../../../lib/distributor/planning/planner';
import { tenantKey } from '../../../../lib/distributor/planning/tenant-backlog';

const q = (name: string, depth: number, weight = 1, tenantWeight?: number, cost?: number): PlanQueue => ({
  name,
  depth,
  weight,
  tenant: tenantKey(name),
  ...(tenantWeight === undefined ? {} : { tenantWeight }),
  ...(cost === undefined ? {} : { cost }),
});
const tenantTotals = (shares: readonly { name: string; share: number }[]) => {
  const totals: Record<string, number> = {};
  for (const { name, share } of shares) totals[tenantKey(name)] = (totals[tenantKey(name)] ?? 0) + share;
  return totals;
};

describe('planShares (tenant): the room is the tenants’, not the queues’', () => {
  // Issue 37: on 3606f62 this plan was A 100, B 10 (every staging queue one share).
  it('capacity 110, A over 10 backlogged workflows, B over 1: A 55, B 55', () => {
    const queues = [...Array.from({ length: 10 }, (_, i) => q(`t»/A/wf${i}`, 1000)), q('t»/B/wf0', 1000)];
    const plan = planShares({ capacity: 110, queues, mode: 'tenant' });
    expect(tenantTotals(plan.shares)).toEqual({ 't»/A': 55, 't»/B': 55 });
    // Within A: 5 each and the 5 left over to the first five, the rotation kept per tenant.
    expect(plan.shares.filter((s) => s.name.startsWith('t»/A/')).map((s) => s.share)).toEqual([
      6, 6, 6, 6, 6, 5, 5, 5, 5, 5,
    ]);
    expect(plan.innerCursors).toEqual({ 't»/A': 't»/A/wf4' });
  });

  it('the queue planner keeps the per-queue division (A 100, B 10)', () => {
    const queues = [...Array.from({ length: 10 }, (_, i) => q(`t»/A/wf${i}`, 1000)), q('t»/B/wf0', 1000)];
    expect(tenantTotals(planShares({ capacity: 110, queues, mode: 'queue' }).shares)).toEqual({
      't»/A': 100,
      't»/B': 10,
    });
  });

  it('a tenant weighs its part; a workflow weighs within its tenant; a tenant-less queue is a tenant of its own', () => {
    const queues = [q('t»/A/x', 100, 3, 2), q('t»/A/y', 100, 1, 2), q('t»/B/z', 100, 1, 1), q('t»/wf', 100)];
    const plan = planShares({ capacity: 80, queues, mode: 'tenant' });
    expect(Object.fromEntries(plan.shares.map((s) => [s.name, s.share]))).toEqual({
      't»/A/x': 30,
      't»/A/y': 10,
      't»/B/z': 20,
      't»/wf': 20,
    });
  });

  it('a tenant of weight 0 gets nothing and its room goes to the others', () => {
    const plan = planShares({ capacity: 10, queues: [q('t»/A/x', 100, 1, 0), q('t»/B/x', 100)], mode: 'tenant' });
    expect(tenantTotals(plan.shares)).toEqual({ 't»/A': 0, 't»/B': 10 });
  });

  it('with a room below the tenants, every tenant and every workflow of it is served in turn', () => {
    const queues = [...Array.from({ length: 4 }, (_, i) => q(`t»/A/wf${i}`, 1000)), q('t»/B/wf0', 1000)];
    const got = new Map<string, number>();
    let carry: { rotationCursor?: string; innerCursors?: Record<string, string> } = {};
    for (let pass = 0; pass < 8; pass++) {
      const plan = planShares({ capacity: 1, queues, mode: 'tenant', ...carry });
      for (const s of plan.shares) got.set(s.name, (got.get(s.name) ?? 0) + s.share);
      carry = {
        ...(plan.rotationCursor ? { rotationCursor: plan.rotationCursor } : {}),
        ...(plan.innerCursors ? { innerCursors: plan.innerCursors } : {}),
      };
    }
    expect(Object.fromEntries(got)).toEqual({
      't»/A/wf0': 1,
      't»/A/wf1': 1,
      't»/A/wf2': 1,
      't»/A/wf3': 1,
      't»/B/wf0': 4,
    });
  });
});

describe('planShares (tenant, fair by work)', () => {
  it('A’s messages 10 × B’s: equal work per pass when the room allows', () => {
    const plan = planShares({
      capacity: 110,
      queues: [q('t»/A/x', 1000, 1, 1, 10), q('t»/B/x', 1000, 1, 1, 1)],
      mode: 'tenant',
      fairBy: 'work',
    });
    expect(tenantTotals(plan.shares)).toEqual({ 't»/A': 10, 't»/B': 100 });
  });

  it('a room below one large message a pass: the deficit carried gives A its work over passes', () => {
    const queues = [q('t»/A/x', 1_000_000, 1, 1, 10), q('t»/B/x', 1_000_000, 1, 1, 1)];
    const work = { 't»/A': 0, 't»/B': 0 };
    let deficits: Record<string, number> | undefined;
    for (let pass = 0; pass < 220; pass++) {
      const plan = planShares({
        capacity: 2,
        queues,
        mode: 'tenant',
        fairBy: 'work',
        ...(deficits ? { deficits } : {}),
      });
      const totals = tenantTotals(plan.shares);
      work['t»/A'] += 10 * (totals['t»/A'] ?? 0);
      work['t»/B'] += totals['t»/B'] ?? 0;
      deficits = plan.deficits;
    }
    expect(work['t»/A'] / work['t»/B']).toBeGreaterThan(0.9);
    expect(work['t»/A'] / work['t»/B']).toBeLessThan(1.1);
  });
});

const namesArb = fc.uniqueArray(
  fc.record({ tenant: fc.constantFrom('a', 'b', 'c', 'd'), workflow: fc.constantFrom('1', '2', '3', '') }),
  { minLength: 1, maxLength: 12, selector: (n) => `${n.tenant}/${n.workflow}` },
);
const inputArb = fc
  .tuple(
    fc.nat(3000),
    namesArb,
    fc.array(fc.nat(800), { minLength: 12, maxLength: 12 }),
    fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 12, maxLength: 12 }),
    fc.record({
      a: fc.integer({ min: 0, max: 4 }),
      b: fc.integer({ min: 1, max: 4 }),
      c: fc.integer({ min: 1, max: 4 }),
      d: fc.integer({ min: 1, max: 4 }),
    }),
    fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 12, maxLength: 12 }),
    fc.constantFrom<'messages' | 'work'>('messages', 'work'),
    fc.dictionary(fc.constantFrom('t»/a', 't»/b', 't»/c'), fc.integer({ min: -40, max: 40 })),
  )
  .map(([capacity, names, depths, weights, tenantWeights, costs, fairBy, deficits]) => ({
    capacity,
    fairBy,
    deficits,
    queues: names.map((n, i) =>
      q(
        `t»/${n.tenant}${n.workflow ? `/${n.workflow}` : ''}`,
        depths[i]!,
        weights[i]!,
        tenantWeights[n.tenant as 'a'],
        costs[i]!,
      ),
    ),
  }));

describe('planShares (tenant) properties', () => {
  it('never above capacity, no queue above its depth, work-conserving; messages or work', () => {
    fc.assert(
      fc.property(inputArb, ({ capacity, queues, fairBy, deficits }) => {
        const { shares } = planShares({ capacity, queues, mode: 'tenant', fairBy, deficits });
        const depth = new Map(queues.map((x) => [x.name, x]));
        const served = queues.filter((x) => x.weight > 0 && (x.tenantWeight ?? 1) > 0);
        const total = shares.reduce((n, s) => n + s.share, 0);
        expect(total).toBeLessThanOrEqual(capacity);
        for (const s of shares) expect(s.share).toBeLessThanOrEqual(depth.get(s.name)!.depth);
        for (const s of shares) if (!served.some((x) => x.name === s.name)) expect(s.share).toBe(0);
        expect(total).toBe(
          Math.min(
            capacity,
            served.reduce((n, x) => n + x.depth, 0),
          ),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('weights hold at both levels (messages): no backlogged tenant or queue gets less per weight than another, ±1', () => {
    fc.assert(
      fc.property(inputArb, ({ capacity, queues }) => {
        const { shares } = planShares({ capacity, queues, mode: 'tenant' });
        const share = new Map(shares.map((s) => [s.name, s.share]));
        const served = queues.filter((x) => x.weight > 0 && (x.tenantWeight ?? 1) > 0 && x.depth > 0);
        const tenants = new Map<string, { part: number; depth: number; weight: number; queues: PlanQueue[] }>();
        for (const x of served) {
          const t = tenants.get(x.tenant!) ?? { part: 0, depth: 0, weight: x.tenantWeight ?? 1, queues: [] };
          t.part += share.get(x.name)!;
          t.depth += x.depth;
          t.queues.push(x);
          tenants.set(x.tenant!, t);
        }
        const fairAmong = (items: { got: number; depth: number; weight: number }[]) => {
          for (const i of items) {
            if (i.got >= i.depth) continue; // it could take more: nobody may have more per weight
            for (const j of items) expect((i.got + 1) / i.weight).toBeGreaterThanOrEqual((j.got - 1) / j.weight);
          }
        };
        fairAmong([...tenants.values()].map((t) => ({ got: t.part, depth: t.depth, weight: t.weight })));
        for (const t of tenants.values()) {
          fairAmong(t.queues.map((x) => ({ got: share.get(x.name)!, depth: x.depth, weight: x.weight })));
        }
      }),
      { numRuns: 500 },
    );
  });
});
