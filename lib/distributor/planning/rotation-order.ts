/**
 * `items` (in name order) starting after `cursor`: the ones whose name comes after it, then the
 * ones from the start up to it. Without a cursor, or when none comes after it, the name order
 * itself. The planner hands out remainder units in this order and the budget keeps shares in it,
 * so both resume where the last pass stopped. Pure.
 */
export function rotateAfter<T extends { name: string }>(items: readonly T[], cursor: string | undefined): T[] {
  const start = items.findIndex((item) => cursor === undefined || item.name > cursor);
  return start <= 0 ? [...items] : [...items.slice(start), ...items.slice(0, start)];
}
