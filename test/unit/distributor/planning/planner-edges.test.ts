import { targetCapacity } from '../../../../lib/distributor/planning/capacity';
import { type PlanQueue, planShares } from '../../../../lib/distributor/planning/planner';
import { weightOf } from '../../../../lib/distributor/planning/weights';

const q = (name: string, depth: number, weight = 1): PlanQueue => ({ name, depth, weight });

describe('planShares at its edges', () => {
  it('lists the shares in name order whatever order the queues came in', () => {
    const { shares } = planShares({ capacity: 3, queues: [q('c', 9), q('b', 9), q('a', 9)], mode: 'queue' });
    expect(shares.map((s) => s.name)).toEqual(['a', 'b', 'c']);
    const reference = planShares({ capacity: 3, queues: [q('b', 9), q('c', 9), q('a', 9)], mode: 'reference' });
    expect(reference.shares.map((s) => s.name)).toEqual(['a', 'b', 'c']);
  });

  it('never gives a queue more than it holds when it holds exactly its weighted share', () => {
    // a (weight 2) holds exactly 6 × 2/4 = 3; b and c split the other 3, the odd unit going to b.
    const { shares } = planShares({ capacity: 6, queues: [q('a', 3, 2), q('b', 100), q('c', 100)], mode: 'queue' });
    expect(shares).toEqual([
      { name: 'a', share: 3 },
      { name: 'b', share: 2 },
      { name: 'c', share: 1 },
    ]);
  });

  it('wraps the remainder round to the first queue when the cursor is past every name', () => {
    const plan = planShares({
      capacity: 2,
      queues: [q('a', 9), q('b', 9), q('c', 9)],
      mode: 'queue',
      rotationCursor: 'z',
    });
    expect(plan).toEqual({
      shares: [
        { name: 'a', share: 1 },
        { name: 'b', share: 1 },
        { name: 'c', share: 0 },
      ],
      rotationCursor: 'b',
    });
  });

  it('reference mode divides among the non-empty queues only, and gives nothing when all are empty', () => {
    const shares = (capacity: number, queues: PlanQueue[]) =>
      planShares({ capacity, queues, mode: 'reference' }).shares.map((s) => s.share);
    expect(shares(10, [q('a', 0), q('b', 50), q('c', 50)])).toEqual([0, 5, 5]);
    expect(shares(0, [q('a', 0), q('b', 0)])).toEqual([0, 0]);
    expect(shares(10, [q('a', 0), q('b', 0)])).toEqual([0, 0]);
  });
});

describe('targetCapacity at its edges', () => {
  const base = { queueMaxLength: undefined, defaultMaxLength: 1000, depth: 0, refillThresholdPercent: 10 };

  it.each([
    ['a fractional x-max-length', 1.5],
    ['a numeric string', '200'],
    ['a boolean', true],
  ])('ignores %s and uses the configured length', (_, queueMaxLength) => {
    expect(targetCapacity({ ...base, queueMaxLength, configuredMaxLength: 70 })).toMatchObject({
      maxLength: 70,
      maxLengthFrom: 'configuration',
    });
  });

  it('takes a tuned length, but never past the queue’s own x-max-length', () => {
    const tuned = (queueMaxLength: unknown) =>
      targetCapacity({ ...base, queueMaxLength, configuredMaxLength: 70, kept: { length: 300, from: 'tuned' } });
    expect(tuned(undefined)).toMatchObject({ maxLength: 300, maxLengthFrom: 'tuned' });
    expect(tuned(500)).toMatchObject({ maxLength: 300, maxLengthFrom: 'tuned' });
    expect(tuned(300)).toMatchObject({ maxLength: 300, maxLengthFrom: 'tuned' });
    expect(tuned(200)).toMatchObject({ maxLength: 200, maxLengthFrom: 'queue-limit' });
  });

  it('takes an x-max-length of 0 as a target that takes nothing', () => {
    expect(targetCapacity({ ...base, queueMaxLength: 0 })).toMatchObject({
      maxLength: 0,
      maxLengthFrom: 'queue-limit',
      capacity: 0,
    });
  });
});

describe('weightOf at its edges', () => {
  it('keeps the more specific rule even when a less specific one listed after it weighs more', () => {
    const weight = weightOf([
      { pattern: 'q»/t1/*', weight: 2 },
      { pattern: 'q»/**', weight: 5 },
    ]);
    expect(weight('q»/t1/w')).toBe(2);
    expect(weight('q»/t2/w')).toBe(5);
  });

  it('counts only the literal characters of a glob against a regex match of the same length', () => {
    // The glob has 6 literal characters and the regex matches 6: a tie, which the higher weight wins.
    const weight = weightOf([
      { pattern: 'q»/t1/*', weight: 2 },
      { regex: 'q»/t1/', weight: 3 },
    ]);
    expect(weight('q»/t1/w')).toBe(3);
  });
});
