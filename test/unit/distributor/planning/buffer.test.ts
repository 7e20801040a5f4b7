import { bufferDepth, MIN_DEPTH, nextDrain, START_DEPTH } from '../../../../lib/distributor/planning/capacity';

const horizon = { horizonMs: 250 };

describe('the target buffer', () => {
  it('starts shallow without a rate, never above the max length', () => {
    expect(bufferDepth(undefined, 1000, horizon)).toBe(START_DEPTH);
    expect(bufferDepth(undefined, 3, horizon)).toBe(3);
  });

  it('starts no deeper than it ever keeps: 20 at first held a quiet message 2 s behind workers at 10 msg/s', () => {
    expect(START_DEPTH).toBe(MIN_DEPTH);
    expect(bufferDepth(undefined, 1000, horizon)).toBe(bufferDepth(0, 1000, horizon));
  });

  it('keeps rate × horizon, at least MIN_DEPTH, at most the max length', () => {
    expect(bufferDepth(200, 1000, horizon)).toBe(50);
    expect(bufferDepth(10, 1000, horizon)).toBe(MIN_DEPTH);
    expect(bufferDepth(0, 1000, horizon)).toBe(MIN_DEPTH);
    expect(bufferDepth(10_000, 1000, horizon)).toBe(1000);
  });

  it('measures the drain from the depth it left (read + moved) to the depth read next, smoothed', () => {
    const first = nextDrain({ left: 50, at: 0 }, 40, 100); // 10 in 100 ms
    expect(first).toBe(100);
    const second = nextDrain({ perSecond: first, left: 50, at: 100 }, 30, 200); // 200/s
    expect(second).toBeGreaterThan(100);
    expect(second).toBeLessThan(200);
    expect(nextDrain(undefined, 30, 100)).toBeUndefined();
    expect(nextDrain({ perSecond: 42, left: 10, at: 100 }, 5, 100)).toBe(42); // no time passed
  });

  it('a target found empty drained at least as fast as that reading shows, unsmoothed', () => {
    expect(nextDrain({ perSecond: 10, left: 20, at: 0 }, 0, 50)).toBe(400);
    // The rate a reading shows, not more: workers that empty a shallow target do not inflate it.
    expect(nextDrain({ perSecond: 300, left: 5, at: 0 }, 0, 500)).toBeCloseTo(300 + 0.2 * (10 - 300));
  });
});
