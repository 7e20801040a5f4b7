import { fitToBudget } from '../../../../lib/distributor/planning/budget';

const costs = { perQueueMs: 10, perMessageMs: 1, slots: 2 };
const shares = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, share: 10 }));

describe('fitToBudget', () => {
  it.each([
    // budget × slots ÷ (10 + 10 per queue) queues fit
    { budget: 1_000, cursor: undefined, kept: ['a', 'b', 'c', 'd', 'e'], next: undefined },
    { budget: 40, cursor: undefined, kept: ['a', 'b', 'c', 'd'], next: 'd' },
    { budget: 20, cursor: undefined, kept: ['a', 'b'], next: 'b' },
    { budget: 20, cursor: 'b', kept: ['c', 'd'], next: 'd' },
    { budget: 30, cursor: 'd', kept: ['e', 'a', 'b'], next: 'b' },
    { budget: 5, cursor: undefined, kept: [], next: undefined },
  ])('budget $budget ms after $cursor keeps $kept', ({ budget, cursor, kept, next }) => {
    const fitted = fitToBudget(shares, cursor, budget, costs);
    expect(fitted.shares.filter((s) => s.share > 0).map((s) => s.name)).toEqual([...kept].sort());
    expect(fitted.shares.map((s) => s.name)).toEqual(shares.map((s) => s.name));
    expect(fitted.deferred).toBe(shares.length - kept.length);
    expect(fitted.rotationCursor).toBe(next);
  });

  it('serves every queue within a few passes when each pass fits only some', () => {
    const many = Array.from({ length: 10 }, (_, i) => ({ name: `q${i}`, share: 1 }));
    const served = new Map<string, number>();
    let cursor: string | undefined;
    for (let pass = 0; pass < 4; pass++) {
      const fitted = fitToBudget(many, cursor, 11, { perQueueMs: 2, perMessageMs: 1, slots: 1 });
      for (const s of fitted.shares) if (s.share > 0) served.set(s.name, (served.get(s.name) ?? 0) + 1);
      cursor = fitted.rotationCursor ?? cursor;
    }
    expect([...served.values()].every((n) => n >= 1)).toBe(true);
    expect(served.size).toBe(10);
  });

  it("keeps each share's other fields (a stamped priority) when it defers some", () => {
    const stamped = shares.map((s, i) => ({ ...s, priority: i }));
    const fitted = fitToBudget(stamped, undefined, 20, costs);
    expect(fitted.shares.map((s) => [s.share, s.priority])).toEqual([
      [10, 0],
      [10, 1],
      [0, 2],
      [0, 3],
      [0, 4],
    ]);
  });

  it('leaves zero shares alone and does not count them', () => {
    const fitted = fitToBudget(
      [
        { name: 'a', share: 0 },
        { name: 'b', share: 5 },
      ],
      undefined,
      100,
      costs,
    );
    expect(fitted).toEqual({
      shares: [
        { name: 'a', share: 0 },
        { name: 'b', share: 5 },
      ],
      deferred: 0,
    });
  });
});
