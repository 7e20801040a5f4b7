/** A fetch that counts requests by method and path (query string left out), for the management API. */
export function countingFetch(inner: typeof fetch = fetch) {
  const counts = new Map<string, number>();
  const counted: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const key = `${init?.method ?? 'GET'} ${decodeURIComponent(url.pathname)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return inner(input, init);
  };
  return {
    fetch: counted,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    byPath: () => new Map(counts),
    reset: () => counts.clear(),
  };
}

/**
 * Peak JavaScript heap while `work` runs, sampled every few milliseconds, above what was in use
 * before it (after a GC when node runs with --expose-gc, which `npm run bench` passes). RSS is
 * not used: it rarely shrinks, so what came before hides the step.
 */
export async function peakMemory<T>(work: () => Promise<T>): Promise<{ result: T; peakHeapMiB: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().heapUsed;
  let heap = before;
  const sample = () => {
    heap = Math.max(heap, process.memoryUsage().heapUsed);
  };
  const timer = setInterval(sample, 5);
  try {
    const result = await work();
    sample();
    return { result, peakHeapMiB: (heap - before) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}
