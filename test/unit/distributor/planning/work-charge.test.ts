import fc from 'fast-check';
import { planShares } from '../../../../lib/distributor/planning/planner';
import {
  chargeMoves,
  type MovedShare,
  stagedQueues,
  tenantKey,
} from '../../../../lib/distributor/planning/tenant-backlog';
import { type FairBy, messageWork } from '../../../../lib/distributor/planning/weights';

const declared: FairBy = { unit: 'declared', header: 'x-cost', missing: 2 };
const message = (bytes: number, headers?: Record<string, unknown>) => ({
  content: { length: bytes },
  properties: headers ? { headers } : {},
});

describe('messageWork: what one message brings in the fair-by unit', () => {
  it.each([
    ['messages', { unit: 'messages' } as FairBy, message(500, { 'x-cost': 9 }), 1],
    ['bytes', { unit: 'bytes' } as FairBy, message(500, { 'x-cost': 9 }), 500],
    ['a declared number', declared, message(500, { 'x-cost': 9 }), 9],
    ['a declared string of a number', declared, message(500, { 'x-cost': '2.5' }), 2.5],
    ['no header: the cost of a message without one', declared, message(500), 2],
    ['another header only', declared, message(500, { other: 9 }), 2],
    ['zero', declared, message(500, { 'x-cost': 0 }), 2],
    ['negative', declared, message(500, { 'x-cost': -4 }), 2],
    ['not a number', declared, message(500, { 'x-cost': 'ten' }), 2],
    ['an empty string', declared, message(500, { 'x-cost': '' }), 2],
    ['infinite', declared, message(500, { 'x-cost': Number.POSITIVE_INFINITY }), 2],
  ])('%s', (_, fairBy, m, work) => {
    expect(messageWork(fairBy)(m)).toBe(work);
  });
});

const share = (tenant: string, planned: number, moved: number, work: number, depth = 1000, cost = 1): MovedShare => ({
  tenant,
  depth,
  cost,
  planned,
  moved,
  work,
});

describe('chargeMoves: each tenant pays the work its moved messages brought', () => {
  it('a tenant whose messages were larger than planned owes the difference; one that moved less is owed it', () => {
    // Planned at 1 a message: A's 10 moved brought 14, B's 10 planned moved 7 (its queue held less in flight).
    const carry = chargeMoves(
      { deficits: { 't»/A': 1 } },
      [share('t»/A', 10, 10, 14), share('t»/B', 10, 7, 7)],
      undefined,
    );
    expect(carry).toEqual({ deficits: { 't»/A': -2, 't»/B': 2 } });
  });

  it('the debt is bounded to two messages of the tenant’s cost, and settled debts are dropped', () => {
    const carry = chargeMoves(
      { deficits: { 't»/A': 0.5, 't»/C': 3 } },
      [share('t»/A', 5, 5, 5.5, 1000), share('t»/B', 4, 4, 400, 1000, 5)],
      undefined,
    );
    // A: 0.5 + 5 − 5.5 = 0, dropped; B: 20 − 400 bounded at −10; C did not move and keeps its debt.
    expect(carry).toEqual({ deficits: { 't»/B': -10, 't»/C': 3 } });
  });

  it('a tenant whose queues were emptied starts afresh', () => {
    expect(chargeMoves({ deficits: { 't»/A': 2 } }, [share('t»/A', 5, 5, 9, 5)], undefined)).toEqual({});
  });

  it('learns a tenant’s declared cost from its moved messages, slowly once known, and forgets gone tenants', () => {
    const tenants = new Set(['t»/A', 't»/B']);
    const first = chargeMoves({}, [share('t»/A', 10, 10, 100), share('t»/B', 10, 10, 10)], { tenants });
    expect(first.costs).toEqual({ 't»/A': 10, 't»/B': 1 });
    // A's next 20 messages declare 20 each: halfway (20 of 20 + 20 messages' weight).
    const next = chargeMoves({ costs: { ...first.costs!, 't»/gone': 4 } }, [share('t»/A', 20, 20, 400, 1000, 10)], {
      tenants,
    });
    expect(next.costs).toEqual({ 't»/A': 15, 't»/B': 1 });
  });
});

describe('declared costs in the plan: learned, and fair in work over passes', () => {
  const staging = [
    { name: 't»/A/wf', depth: 1_000_000 },
    { name: 't»/B/wf', depth: 1_000_000 },
  ];
  const trueCost: Record<string, number> = { 't»/A': 10, 't»/B': 1 };

  it('a tenant not learned yet weighs the mean of those learned, else the cost of a message without a header', () => {
    const sized = (costs?: Record<string, number>) =>
      stagedQueues(
        staging,
        { planner: 'tenant', fairBy: declared, stagedMessageBytes: 0, ...(costs ? { costs } : {}) },
        () => ({
          queue: 1,
          tenant: 1,
          workflow: 1,
        }),
      ).map((q) => q.cost);
    expect(sized()).toEqual([2, 2]);
    expect(sized({ 't»/A': 10, 't»/C': 4 })).toEqual([10, 7]);
  });

  it('from nothing known, worker time per tenant is equal within 5 % after the first passes', () => {
    let carry: { deficits?: Record<string, number>; costs?: Record<string, number> } = {};
    const work: Record<string, number> = { 't»/A': 0, 't»/B': 0 };
    for (let pass = 0; pass < 60; pass++) {
      const queues = stagedQueues(
        staging,
        { planner: 'tenant', fairBy: declared, stagedMessageBytes: 0, ...(carry.costs ? { costs: carry.costs } : {}) },
        () => ({ queue: 1, tenant: 1, workflow: 1 }),
      );
      const plan = planShares({
        capacity: 11,
        queues,
        mode: 'tenant',
        fairBy: 'work',
        deficits: carry.deficits ?? {},
      });
      const moved = plan.shares.map(({ name, share: s }) => {
        const q = queues.find((x) => x.name === name)!;
        const tenant = tenantKey(name);
        if (pass >= 10) work[tenant]! += s * trueCost[tenant]!;
        return share(tenant, s, s, s * trueCost[tenant]!, q.depth, q.cost);
      });
      carry = chargeMoves(
        { ...(plan.deficits ? { deficits: plan.deficits } : {}), ...(carry.costs ? { costs: carry.costs } : {}) },
        moved,
        { tenants: new Set(['t»/A', 't»/B']) },
      );
    }
    expect(carry.costs).toEqual({ 't»/A': 10, 't»/B': 1 });
    expect(work['t»/A']! / work['t»/B']!).toBeGreaterThan(0.95);
    expect(work['t»/A']! / work['t»/B']!).toBeLessThan(1.05);
  });
});

describe('chargeMoves, for any moves', () => {
  const moveArb = fc.record({
    tenant: fc.constantFrom('t»/a', 't»/b', 't»/c'),
    depth: fc.integer({ min: 0, max: 50 }),
    cost: fc.integer({ min: 1, max: 20 }),
    planned: fc.integer({ min: 0, max: 50 }),
    moved: fc.integer({ min: 0, max: 50 }),
    work: fc.integer({ min: 0, max: 1000 }),
  });
  // A carried debt is never 0 (a settled one is dropped).
  const carryArb = fc.dictionary(
    fc.constantFrom('t»/a', 't»/b', 't»/c'),
    fc.integer({ min: -40, max: 40 }).filter((d) => d !== 0),
  );

  it('keeps each moved tenant’s debt within two of its messages, and none for a tenant left with nothing', () => {
    fc.assert(
      fc.property(fc.array(moveArb, { maxLength: 6 }), carryArb, (raw, deficits) => {
        // The plan's cost is one per tenant (its queues' as listed or learned).
        const moves = raw.map((m) => ({ ...m, cost: m.tenant.length, moved: Math.min(m.moved, m.depth) }));
        const after = chargeMoves({ deficits }, moves, undefined).deficits ?? {};
        for (const tenant of new Set(moves.map((m) => m.tenant))) {
          const left = moves.filter((m) => m.tenant === tenant).reduce((n, m) => n + m.depth - m.moved, 0);
          if (left === 0) expect(after[tenant]).toBeUndefined();
          else expect(Math.abs(after[tenant] ?? 0)).toBeLessThanOrEqual(2 * tenant.length + 1e-9);
        }
        for (const tenant of Object.keys(deficits))
          if (!moves.some((m) => m.tenant === tenant)) expect(after[tenant]).toBe(deficits[tenant]);
      }),
    );
  });
});
