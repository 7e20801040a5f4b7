import { sqsBatches } from './fleet-metrics';

/** One event of the traffic: its message id (for its wait) and its after-process body. */
export interface TrafficEvent {
  id: string;
  body: string;
}

export interface TrafficOptions {
  /** The events that arrive in the queue in one batching window. */
  arrivals: () => TrafficEvent[];
  /** serverless.yml's maximumBatchingWindow. */
  windowMs: number;
  /** serverless.yml's batchSize. */
  batchSize: number;
  /**
   * Router invocations at once at most: the SQS queue holds what the routers cannot take yet (a
   * bench process that let them pile up would measure its own queueing).
   */
  concurrency: number;
  /** One router invocation. */
  route: (bodies: readonly string[]) => Promise<unknown>;
}

/**
 * Traffic at a fixed rate through an SQS event source: every window, what arrived goes out in
 * batches; each event's hand-over time (its batch's router invocation starting) by id.
 */
export function startTraffic(options: TrafficOptions) {
  const handed = new Map<string, number>();
  const waiting: TrafficEvent[][] = [];
  const running = new Set<Promise<unknown>>();
  const batchSizes: number[] = [];
  let events = 0;
  const pump = () => {
    while (running.size < options.concurrency && waiting.length > 0) {
      const batch = waiting.shift()!;
      const at = Date.now();
      for (const event of batch) handed.set(event.id, at);
      batchSizes.push(batch.length);
      const call = options
        .route(batch.map((event) => event.body))
        .catch(() => undefined) // the router reports its own failures
        .finally(() => {
          running.delete(call);
          pump();
        });
      running.add(call);
    }
  };
  const timer = setInterval(() => {
    const arrived = options.arrivals();
    events += arrived.length;
    waiting.push(...sqsBatches(arrived, options.batchSize));
    pump();
  }, options.windowMs);
  return {
    handed,
    /** Each router invocation's batch size, in order (the plain path replays them). */
    batchSizes,
    events: () => events,
    /** Stops new arrivals; hands over what is queued, and waits for the invocations. */
    async stop() {
      clearInterval(timer);
      while (waiting.length > 0 || running.size > 0) {
        pump();
        await Promise.allSettled([...running]);
      }
    },
  };
}
