import fc from 'fast-check';
import { type PlanQueue, planShares } from '../../../../lib/distributor/planning/planner';

const q = (name: string, depth: number, weight = 1): PlanQueue => ({ name, depth, weight });
const sharesOf = (
  capacity: number,
  queues: PlanQueue[],
  rotationCursor?: string,
  mode: 'queue' | 'reference' = 'queue',
) => Object.fromEntries(planShares({ capacity, queues, mode, rotationCursor }).shares.map((s) => [s.name, s.share]));

describe('planShares (queue)', () => {
  it.each([
    ['two equal backlogs split the room (reference scenario)', 200, [q('a', 500), q('b', 500)], { a: 100, b: 100 }],
    [
      'capacity a small queue cannot use goes to the others',
      300,
      [q('a', 1), q('b', 5), q('c', 1000)],
      { a: 1, b: 5, c: 294 },
    ],
    ['no capacity, nothing moves', 0, [q('a', 10), q('b', 10)], { a: 0, b: 0 }],
    ['less backlog than room: everything moves', 100, [q('a', 10), q('b', 20)], { a: 10, b: 20 }],
    ['backlog exactly the room', 30, [q('a', 10), q('b', 20)], { a: 10, b: 20 }],
    ['empty queues get nothing', 10, [q('a', 0), q('b', 50)], { a: 0, b: 10 }],
    ['weights divide a shared backlog', 40, [q('a', 100, 3), q('b', 100, 1)], { a: 30, b: 10 }],
    [
      'a heavy queue that runs dry leaves its room to the light one',
      40,
      [q('a', 5, 3), q('b', 100, 1)],
      { a: 5, b: 35 },
    ],
    ['remainder goes in name order from the start', 10, [q('c', 50), q('a', 50), q('b', 50)], { a: 4, b: 3, c: 3 }],
    ['no overshoot when capacity < N', 2, [q('a', 9), q('b', 9), q('c', 9)], { a: 1, b: 1, c: 0 }],
  ])('%s', (_what, capacity, queues, expected) => {
    expect(sharesOf(capacity, queues)).toEqual(expected);
  });

  it('hands the remainder to the queues after the rotation cursor, wrapping round, and moves the cursor', () => {
    const queues = [q('a', 9), q('b', 9), q('c', 9)];
    expect(planShares({ capacity: 2, queues, mode: 'queue', rotationCursor: 'b' })).toEqual({
      shares: [
        { name: 'a', share: 1 },
        { name: 'b', share: 0 },
        { name: 'c', share: 1 },
      ],
      rotationCursor: 'a',
    });
    // A cursor naming a queue that is gone still finds its place in name order.
    expect(sharesOf(1, queues, 'bb')).toEqual({ a: 0, b: 0, c: 1 });
    // No remainder: the cursor stays where it was.
    expect(planShares({ capacity: 3, queues, mode: 'queue', rotationCursor: 'b' }).rotationCursor).toBe('b');
  });

  it('rejects a negative or fractional depth and a negative weight, naming the queue', () => {
    expect(() => sharesOf(5, [q('t»/x', -1)])).toThrow('Staging queue t»/x: depth must be a non-negative integer');
    expect(() => sharesOf(5, [q('t»/x', 1.5)])).toThrow('depth must be a non-negative integer');
    expect(() => sharesOf(5, [q('t»/y', 1, -1)])).toThrow('Staging queue t»/y: weight must be a number of at least 0');
  });

  // fast-lane-processing.md: a queue's share is capacity ÷ sum of weights × its weight; weight 0 gets
  // nothing, and "messages not used by queues will be redistributed to queues with more messages".
  it.each([
    [
      'weight 0 gets nothing; the others share its room',
      90,
      [q('a', 100, 0), q('b', 100), q('c', 100, 2)],
      { a: 0, b: 30, c: 60 },
    ],
    ['every queue weight 0: nothing moves', 90, [q('a', 100, 0), q('b', 100, 0)], { a: 0, b: 0 }],
    ['decimal weights: 0.5 gets half of 1', 30, [q('a', 100, 0.5), q('b', 100, 1)], { a: 10, b: 20 }],
    ['thousandths are exact', 3000, [q('a', 5000, 0.001), q('b', 5000, 0.002)], { a: 1000, b: 2000 }],
    ['a decimal-weighted queue that runs dry leaves its room', 30, [q('a', 2, 2.5), q('b', 100, 0.5)], { a: 2, b: 28 }],
  ])('%s', (_what, capacity, queues, expected) => {
    expect(sharesOf(capacity, queues)).toEqual(expected);
  });

  it('gives weight 0 nothing in reference mode too', () => {
    expect(sharesOf(10, [q('a', 50, 0), q('b', 50)], undefined, 'reference')).toEqual({ a: 0, b: 10 });
  });
});

describe('planShares (reference mode, for comparison)', () => {
  it.each([
    ['ceil(capacity / N) each', 200, [q('a', 500), q('b', 500)], { a: 100, b: 100 }],
    ['overshoots capacity by rounding up', 10, [q('a', 50), q('b', 50), q('c', 50)], { a: 4, b: 4, c: 4 }],
    ['leaves unused shares idle', 300, [q('a', 1), q('b', 5), q('c', 1000)], { a: 1, b: 5, c: 100 }],
  ])('%s', (_what, capacity, queues, expected) => {
    expect(sharesOf(capacity, queues, undefined, 'reference')).toEqual(expected);
  });
});

const queuesArb = fc.uniqueArray(
  fc.record({
    name: fc.string({ minLength: 1, maxLength: 6 }),
    depth: fc.nat(2000),
    weight: fc.integer({ min: 1, max: 5 }),
  }),
  { minLength: 1, maxLength: 12, selector: (x) => x.name },
);
const inputArb = fc.record({
  capacity: fc.nat(5000),
  queues: queuesArb,
  rotationCursor: fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
});

describe('planShares (fair) properties', () => {
  it('never moves more than capacity, nor more than a queue holds, and fills capacity when the backlog allows', () => {
    fc.assert(
      fc.property(inputArb, ({ capacity, queues, rotationCursor }) => {
        const { shares } = planShares({ capacity, queues, mode: 'queue', rotationCursor });
        const total = shares.reduce((n, s) => n + s.share, 0);
        const backlog = queues.reduce((n, s) => n + s.depth, 0);
        expect(total).toBeLessThanOrEqual(capacity);
        for (const s of shares) expect(s.share).toBeLessThanOrEqual(queues.find((x) => x.name === s.name)!.depth);
        expect(total).toBe(Math.min(capacity, backlog));
      }),
      { numRuns: 500 },
    );
  });

  it('is max-min fair with weights: a queue that is not exhausted never gets less than another, per unit of weight (±1 for rounding)', () => {
    fc.assert(
      fc.property(inputArb, ({ capacity, queues, rotationCursor }) => {
        const { shares } = planShares({ capacity, queues, mode: 'queue', rotationCursor });
        const byName = new Map(queues.map((x) => [x.name, x]));
        for (const i of shares) {
          const qi = byName.get(i.name)!;
          if (i.share >= qi.depth) continue; // exhausted
          for (const j of shares) {
            const qj = byName.get(j.name)!;
            expect((i.share + 1) / qi.weight).toBeGreaterThanOrEqual((j.share - 1) / qj.weight);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('with capacity smaller than the number of queues, serves every backlogged queue within N passes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 30 }),
        fc.integer({ min: 1, max: 29 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 30, maxLength: 30 }),
        (n, rawCapacity, weights) => {
          const capacity = Math.min(rawCapacity, n - 1);
          const queues = Array.from({ length: n }, (_, i) =>
            q(`tenant${String(i).padStart(2, '0')}`, 1_000_000, weights[i]!),
          );
          const served = new Set<string>();
          let cursor: string | undefined;
          for (let pass = 0; pass < n; pass++) {
            const plan = planShares({ capacity, queues, mode: 'queue', rotationCursor: cursor });
            for (const s of plan.shares) if (s.share > 0) served.add(s.name);
            expect(plan.shares.reduce((t, s) => t + s.share, 0)).toBe(capacity);
            cursor = plan.rotationCursor;
          }
          expect(served.size).toBe(n);
        },
      ),
      { numRuns: 300 },
    );
  });
});
