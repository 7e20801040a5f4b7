import fc from 'fast-check';
import {
  checks,
  defaultRules,
  levelOf,
  mappingFromTable,
  reachableLevels,
  type TenantState,
  tenMinusLevel,
} from '../../../lib/routing/priority/rules';

const t0 = Date.UTC(2026, 0, 1);

describe('levelOf (the seed table)', () => {
  it.each([
    [0, 1],
    [-1, 1],
    [-2, 1],
    [-3, 2],
    [-4, 2],
    [-5, 3],
    [-6, 3],
    [-7, 4],
    [-8, 4],
    [-9, 5],
    [-10, 5],
    [-11, 6],
    [-12, 6],
    [-13, 7],
    [-14, 7],
    [-15, 8],
    [-20, 8],
    [-21, 9],
    [-1_000_000, 9],
    [5, 1],
  ])('count %i → level %i', (count, level) => {
    expect(levelOf(count, defaultRules)).toBe(level);
  });
});

describe('one check', () => {
  const recent = (count: number, secondsAgo: number): TenantState => ({ count, lastUpdateMs: t0 - secondsAgo * 1000 });

  it.each<[string, TenantState | undefined, number, number, number]>([
    ['a new tenant starts at 0', undefined, t0, 0, 1],
    ['a recent tenant goes down by one', recent(-2, 10), t0, -3, 2],
    ['exactly 1500 s later does not reset', recent(-20, 1500), t0, -21, 9],
    ['1500.001 s later resets', { count: -20, lastUpdateMs: t0 - 1_500_001 }, t0, 0, 1],
    ['1499.999 s later does not reset', { count: -4, lastUpdateMs: t0 - 1_499_999 }, t0, -5, 3],
    ['an update in the future (clock skew) does not reset', { count: -7, lastUpdateMs: t0 + 5000 }, t0, -8, 4],
  ])('%s', (_, state, now, count, level) => {
    const result = checks(state, now, 1, defaultRules);
    expect(result.counts).toEqual([count]);
    expect(result.levels).toEqual([level]);
    expect(result.state).toEqual({ count, lastUpdateMs: now });
  });

  it('follows a configured interval and table', () => {
    const rules = { resetIntervalMs: 60_000, thresholds: [{ below: 0, level: 5 }], quietLevel: 2 };
    expect(checks({ count: 3, lastUpdateMs: t0 - 60_000 }, t0, 1, rules)).toMatchObject({ counts: [2], levels: [2] });
    expect(checks({ count: 0, lastUpdateMs: t0 - 59_000 }, t0, 1, rules)).toMatchObject({ counts: [-1], levels: [5] });
    expect(checks({ count: -9, lastUpdateMs: t0 - 60_001 }, t0, 1, rules)).toMatchObject({ counts: [0], levels: [2] });
  });

  it('rejects a count of checks that is not a positive integer', () => {
    expect(() => checks(undefined, t0, 0, defaultRules)).toThrow(/k must be a positive integer/);
  });
});

describe('k checks at once', () => {
  it('equal k single checks in order', () => {
    fc.assert(
      fc.property(
        fc.option(
          fc.record({
            count: fc.integer({ min: -40, max: 5 }),
            lastUpdateMs: fc.integer({ min: t0 - 3_000_000, max: t0 }),
          }),
          { nil: undefined },
        ),
        fc.integer({ min: 1, max: 30 }),
        (state, k) => {
          const batch = checks(state, t0, k, defaultRules);
          let current = state;
          const levels: number[] = [];
          for (let i = 0; i < k; i++) {
            const one = checks(current, t0, 1, defaultRules);
            levels.push(...one.levels);
            current = one.state;
          }
          expect(batch.levels).toEqual(levels);
          expect(batch.state).toEqual(current);
        },
      ),
    );
  });

  it('sink one level at a time from level 1 to 9 for a noisy tenant', () => {
    expect(checks(undefined, t0, 23, defaultRules).levels).toEqual([
      1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 8, 8, 8, 8, 9, 9,
    ]);
  });
});

describe('level → AMQP priority', () => {
  it('maps level 1 to the largest priority by default (RabbitMQ delivers larger first)', () => {
    expect(reachableLevels(defaultRules).map(tenMinusLevel)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('takes a configured table and names a level it lacks', () => {
    const mapping = mappingFromTable({ 1: 5, 2: 0 });
    expect([mapping(1), mapping(2)]).toEqual([5, 0]);
    expect(() => mapping(3)).toThrow('No AMQP priority is configured for level 3');
  });
});
