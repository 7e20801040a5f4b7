import { startTraffic, type TrafficEvent } from '../../../bench/lib/fleet-traffic';

describe('traffic through an SQS event source', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const events = (window: number, count: number): TrafficEvent[] =>
    Array.from({ length: count }, (_, i) => ({ id: `${window}-${i}`, body: `{"n":${i}}` }));

  it('hands each window over in batches of at most batchSize, never more invocations at once than its concurrency', async () => {
    let window = 0;
    let running = 0;
    let peak = 0;
    const routed: number[] = [];
    const traffic = startTraffic({
      arrivals: () => events(window++, 250),
      windowMs: 1000,
      batchSize: 100,
      concurrency: 2,
      route: async (bodies) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 300));
        routed.push(bodies.length);
        running--;
      },
    });
    await jest.advanceTimersByTimeAsync(2_000); // two windows
    const stopped = traffic.stop();
    await jest.advanceTimersByTimeAsync(5_000);
    await stopped;
    expect(traffic.events()).toBe(500);
    expect(traffic.batchSizes).toEqual([100, 100, 50, 100, 100, 50]);
    expect(routed.reduce((a, b) => a + b, 0)).toBe(500);
    expect(peak).toBe(2);
    expect(traffic.handed.size).toBe(500);
  });

  it('stamps an event when its batch is handed to the router, not when it arrived', async () => {
    const traffic = startTraffic({
      arrivals: () => events(0, 3),
      windowMs: 1000,
      batchSize: 2,
      concurrency: 1,
      route: () => new Promise((resolve) => setTimeout(resolve, 400)),
    });
    const start = Date.now();
    await jest.advanceTimersByTimeAsync(1_000);
    const stopped = traffic.stop();
    await jest.advanceTimersByTimeAsync(2_000);
    await stopped;
    // One window of 3: batch [0-0, 0-1] at 1 s, batch [0-2] once the first invocation ends, 400 ms later.
    expect(traffic.handed.get('0-0')! - start).toBe(1_000);
    expect(traffic.handed.get('0-2')! - start).toBe(1_400);
  });
});
