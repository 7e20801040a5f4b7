import fc from 'fast-check';
import { drawSeed, seededRandom, shuffled } from '../../../../lib/cleanup/engine/random';

describe('seeded random source and shuffle', () => {
  it('a seed gives the same sequence every time, in [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const values = Array.from({ length: 1000 }, () => a());
    expect(values).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(drawSeed(() => 0.999999999)).toBeLessThan(2 ** 32);
  });

  it('shuffled is a permutation and leaves its input alone', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer(), (items, seed) => {
        const copy = [...items];
        const result = shuffled(items, seededRandom(seed));
        expect(items).toEqual(copy);
        expect([...result].sort((x, y) => x - y)).toEqual([...items].sort((x, y) => x - y));
      }),
    );
  });

  it('every element is equally likely in every position (chi-square, seeded)', () => {
    const n = 5;
    const trials = 20_000;
    const random = seededRandom(2026);
    const counts = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    for (let t = 0; t < trials; t++) {
      for (const [position, item] of shuffled([0, 1, 2, 3, 4], random).entries()) counts[item]![position]!++;
    }
    const expected = trials / n;
    const chiSquare = counts.flat().reduce((sum, observed) => sum + (observed - expected) ** 2 / expected, 0);
    expect(chiSquare).toBeLessThan(39.25); // 16 degrees of freedom, p = 0.001
  });
});
