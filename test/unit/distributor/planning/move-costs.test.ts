import {
  INITIAL_PER_MESSAGE_MS,
  INITIAL_PER_QUEUE_MS,
  LEARNING_RATE,
  moveCostModel,
  PER_QUEUE_SHARE_MAX,
} from '../../../../lib/distributor/planning/budget';

describe('moveCostModel (the learned cost of moves)', () => {
  it('starts at the cautious guess, with the slots it was given', () => {
    expect(moveCostModel(16).costs).toEqual({
      perQueueMs: INITIAL_PER_QUEUE_MS,
      perMessageMs: INITIAL_PER_MESSAGE_MS,
      slots: 16,
    });
    expect([INITIAL_PER_QUEUE_MS, INITIAL_PER_MESSAGE_MS, PER_QUEUE_SHARE_MAX, LEARNING_RATE]).toEqual([
      10, 0.5, 10, 0.2,
    ]);
  });

  it.each([
    // share, ms → per queue, per message (from 10 ms and 0.5 ms)
    { share: 1, ms: 20, perQueueMs: 12, perMessageMs: 0.5 }, // 0.8 × 10 + 0.2 × 20
    { share: 10, ms: 0, perQueueMs: 8, perMessageMs: 0.5 }, // the largest share that teaches the per-queue cost
    { share: 11, ms: 10 + 11 * 3, perQueueMs: 10, perMessageMs: 1 }, // 0.8 × 0.5 + 0.2 × (43 − 10) ÷ 11
    { share: 100, ms: 5, perQueueMs: 10, perMessageMs: 0.4 }, // faster than the per-queue cost: 0 a message seen
    { share: 0, ms: 500, perQueueMs: 10, perMessageMs: 0.5 }, // nothing moved: nothing learned
  ])('a move of $share in $ms ms → $perQueueMs ms a queue, $perMessageMs ms a message', (move) => {
    const model = moveCostModel(4);
    model.learn(move.share, move.ms);
    expect(model.costs.perQueueMs).toBeCloseTo(move.perQueueMs, 10);
    expect(model.costs.perMessageMs).toBeCloseTo(move.perMessageMs, 10);
    expect(model.costs.slots).toBe(4);
  });

  it('follows a change of pace: twenty small moves of 2 ms bring the per-queue cost to within 0.1 ms of it', () => {
    const model = moveCostModel(1);
    for (let i = 0; i < 20; i++) model.learn(1, 2);
    expect(model.costs.perQueueMs).toBeGreaterThan(2);
    expect(model.costs.perQueueMs).toBeLessThan(2.1);
  });
});
