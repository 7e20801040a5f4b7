import { rotateAfter } from './rotation-order';

/**
 * Weighted max-min fairness over `items` (in name order, integer weights): items that hold less
 * than their share get all they hold and the rest is shared again among the others; the remaining
 * items get floor(level × weight) and the units left over (fewer than the number of those items)
 * go one each to the items after `rotationCursor` in name order, so that with capacity smaller
 * than the number of items every item is served within a bounded number of passes. Weight 0 gets
 * nothing (upstream's fast lane). Returns the cursor moved to the last item that got a unit
 * (unchanged without a remainder). Pure.
 */
export function waterFill(
  items: readonly { name: string; depth: number; weight: number }[],
  capacity: number,
  rotationCursor?: string,
): { shares: Map<string, number>; cursor?: string } {
  const share = new Map(items.map((q) => [q.name, 0]));
  let remaining = capacity;
  let unsaturated = items.filter((q) => q.depth > 0 && q.weight > 0);

  // An item that holds no more than the current level × its weight is filled and leaves; the
  // level rises for the others. Integer comparisons keep it exact.
  for (;;) {
    const totalWeight = sum(unsaturated.map((q) => q.weight));
    const filled = new Set(unsaturated.filter((q) => q.depth * totalWeight <= remaining * q.weight));
    if (filled.size === 0 || remaining === 0) break;
    for (const q of filled) {
      share.set(q.name, q.depth);
      remaining -= q.depth;
    }
    unsaturated = unsaturated.filter((q) => !filled.has(q));
    if (unsaturated.length === 0) break;
  }

  const totalWeight = sum(unsaturated.map((q) => q.weight));
  let leftOver = remaining;
  for (const q of unsaturated) {
    const base = Math.floor((remaining * q.weight) / totalWeight);
    share.set(q.name, base);
    leftOver -= base;
  }

  // Every unsaturated item holds more than its floor, so each can take one more unit, and there
  // are fewer units left than such items.
  let cursor = rotationCursor;
  if (leftOver > 0) {
    for (const q of rotateAfter(unsaturated, rotationCursor).slice(0, leftOver)) {
      share.set(q.name, share.get(q.name)! + 1);
      cursor = q.name;
    }
  }
  return { shares: share, ...(cursor === undefined ? {} : { cursor }) };
}

/**
 * Water-filling without rounding: `total` (at most the items' depths summed) shared so that every
 * item either gets all it holds or `level × rate`, the same level for all that do not. Pure.
 */
export function fractionalFill(items: readonly { depth: number; rate: number }[], total: number): number[] {
  const result = items.map(() => 0);
  const order = items
    .map((_, i) => i)
    .sort((a, b) => items[a]!.depth / items[a]!.rate - items[b]!.depth / items[b]!.rate);
  let remaining = total;
  let rates = sum(items.map((item) => item.rate));
  for (const [at, i] of order.entries()) {
    const { depth, rate } = items[i]!;
    if (depth * rates <= remaining * rate) {
      result[i] = depth;
      remaining -= depth;
      rates -= rate;
      continue;
    }
    for (const j of order.slice(at)) result[j] = (remaining * items[j]!.rate) / rates;
    break;
  }
  return result;
}

/** Name order, as the plans list their queues and the rotation runs. */
export const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
