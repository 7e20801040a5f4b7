import { capacityUsed, jainIndex, overshoot } from '../../../bench/lib/fairness-metrics';
import { generateScenario, type PlanPass, seededRandom, simulate } from '../../../bench/lib/scenarios';

describe("Jain's fairness index", () => {
  it.each([
    [[5, 5, 5, 5], 1],
    [[10, 0, 0, 0], 0.25],
    [[1, 2], 9 / 10],
    [[3, 1, 0], 16 / 30],
    [[0, 0], 1],
    [[7], 1],
  ])('of %j is %d', (amounts, expected) => {
    expect(jainIndex(amounts)).toBeCloseTo(expected, 12);
  });

  it('does not depend on scale', () => {
    expect(jainIndex([2, 4, 8])).toBeCloseTo(jainIndex([200, 400, 800]), 12);
  });

  it.each([[[]], [[1, -1]], [[1, Number.NaN]], [[Infinity]]])('rejects %j', (amounts) => {
    expect(() => jainIndex(amounts)).toThrow(RangeError);
  });
});

describe('capacity used', () => {
  it.each([
    // moved, capacity, total depth → used
    [10, 10, 100, 1],
    [5, 10, 100, 0.5],
    [4, 10, 4, 1], // less in the queues than capacity: moving all of it uses all that could be used
    [2, 10, 4, 0.5],
    [13, 10, 100, 1], // beyond capacity is overshoot, not use
  ])('moved %d of capacity %d with %d queued → %d', (moved, capacity, depth, expected) => {
    expect(capacityUsed(moved, capacity, depth)).toBe(expected);
  });

  it('is undefined when nothing could move', () => {
    expect(capacityUsed(0, 0, 50)).toBeUndefined();
    expect(capacityUsed(0, 10, 0)).toBeUndefined();
  });
});

describe('overshoot', () => {
  it.each([
    [10, 10, 0],
    [9, 10, 0],
    [13, 10, 3],
    [1, 0, 1],
  ])('moved %d with capacity %d → %d', (moved, capacity, expected) => {
    expect(overshoot(moved, capacity)).toBe(expected);
  });
});

describe('simulation', () => {
  const scenario = {
    capacity: 2,
    capacityClass: 'below' as const,
    queues: ['a', 'b', 'c', 'd'].map((name) => ({ name, depth: 100 })),
    arrivals: Array.from({ length: 8 }, () => [0, 0, 0, 0]),
  };

  it('sees a planner that always serves the first queues as unfair and starving the others', () => {
    const firstTwo: PlanPass = (capacity, queues) => ({
      shares: queues.map((q, i) => ({ name: q.name, share: i < capacity ? 1 : 0 })),
    });
    const outcome = simulate(scenario, firstTwo);
    expect(outcome).toMatchObject({
      capacity: 2,
      capacityUsed: 1,
      overshootPasses: 0,
      starved: 2,
      longestWait: 8,
      backloggedQueues: 4,
    });
    expect(outcome.jain).toBeCloseTo(0.5, 12);
  });

  it('sees one that gives every queue one message per pass as fair but overshooting', () => {
    const oneEach: PlanPass = (_capacity, queues) => ({ shares: queues.map((q) => ({ name: q.name, share: 1 })) });
    expect(simulate(scenario, oneEach)).toMatchObject({
      capacityUsed: 1,
      overshootPasses: 8,
      overshootMessages: 16,
      jain: 1,
      starved: 0,
      longestWait: 0,
    });
  });

  it('generates the same scenarios from the same seed, with capacity on the chosen side of the queue count', () => {
    const a = generateScenario(seededRandom(7), 'below', 5);
    expect(generateScenario(seededRandom(7), 'below', 5)).toEqual(a);
    expect(a.capacity).toBeLessThan(a.queues.length);
    const above = generateScenario(seededRandom(8), 'above', 5);
    expect(above.capacity).toBeGreaterThanOrEqual(above.queues.length);
    expect(above.arrivals).toHaveLength(5);
  });
});
