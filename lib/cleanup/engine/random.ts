/** A source of uniform numbers in [0, 1); injectable so tests can seed it. */
export type Random = () => number;

/** mulberry32: a small, fast, seedable PRNG; good enough to shuffle and to pick, not for secrets. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fresh 32-bit seed drawn from `random`. */
export const drawSeed = (random: Random) => Math.floor(random() * 4294967296);

/** Fisher–Yates: a uniformly random permutation of `items` (a new array). */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
}
