import { jainIndex } from './fairness-metrics';

/**
 * The figures the flood bench reports (issue 25). They decide its verdicts, so they are pure and
 * unit-tested (test/unit/bench/flood-metrics.test.ts).
 */

/** The nearest-rank quantile (the smallest value with at least q of them at or below it); 0 of nothing. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** One delivery (or ack) by a worker: whose message, when (ms since the run started). */
export interface Arrival {
  tenant: string;
  at: number;
}

/** Arrivals of `tenant`s in [from, to) per second. */
export function ratePerSecond(arrivals: readonly Arrival[], tenants: ReadonlySet<string>, from: number, to: number) {
  if (to <= from) return 0;
  const count = arrivals.filter((a) => tenants.has(a.tenant) && a.at >= from && a.at < to).length;
  return (count * 1000) / (to - from);
}

/**
 * Jain's index of what each tenant got in each `windowMs` window from `from` up to `to` (a window
 * that would end past `to` is left out), among the tenants still backlogged when the window ends
 * (`doneAt`: when each had its last message delivered, Infinity if never): a tenant that ran out
 * has nothing left to be treated fairly with. Windows with fewer than two such tenants are left
 * out. One index per window, in order.
 */
export function jainPerWindow(
  arrivals: readonly Arrival[],
  doneAt: ReadonlyMap<string, number>,
  windowMs: number,
  from: number,
  to: number,
): number[] {
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  const indices: number[] = [];
  for (let start = from; start + windowMs <= to; start += windowMs) {
    const end = start + windowMs;
    const counts = new Map([...doneAt].filter(([, done]) => done >= end).map(([tenant]) => [tenant, 0]));
    if (counts.size < 2) continue;
    for (const a of arrivals)
      if (a.at >= start && a.at < end && counts.has(a.tenant)) counts.set(a.tenant, counts.get(a.tenant)! + 1);
    indices.push(jainIndex([...counts.values()]));
  }
  return indices;
}

/** A sample of the target and its staging queues. */
export interface DepthSample {
  /** ms since the run started */
  at: number;
  /** Ready messages in the target. */
  depth: number;
  /** Messages in the staging queues. */
  staged: number;
  /** Messages the workers held (delivered, not yet processed). */
  held: number;
}

/**
 * The share of the samples with staged work in which the target was idle: nothing ready in it and
 * nothing left in its workers' hands, so they had nothing to do while Fairway held work back (a
 * target whose ready count is 0 while its workers still work through their prefetch is not idle).
 * Also how many samples had staged work; the share is undefined when none had.
 */
export function idleWhileStaged(samples: readonly DepthSample[]): { share: number | undefined; samples: number } {
  const staged = samples.filter((s) => s.staged > 0);
  if (staged.length === 0) return { share: undefined, samples: 0 };
  return { share: staged.filter((s) => s.depth === 0 && s.held === 0).length / staged.length, samples: staged.length };
}

/** Samples in which the target held more than `maxLength` ready messages. */
export function overfilled(samples: readonly DepthSample[], maxLength: number): number {
  return samples.filter((s) => s.depth > maxLength).length;
}

/** The target's depth over time, compactly: the largest depth per `bucketMs`, space-separated, in order. */
export function depthSeries(samples: readonly DepthSample[], bucketMs: number): string {
  const buckets: number[] = [];
  for (const s of samples) {
    const i = Math.floor(s.at / bucketMs);
    while (buckets.length <= i) buckets.push(Number.NaN);
    buckets[i] = Number.isNaN(buckets[i]!) ? s.depth : Math.max(buckets[i]!, s.depth);
  }
  return buckets.map((d) => (Number.isNaN(d) ? '·' : String(d))).join(' ');
}

/** One delivery to a worker; `started` is false when the worker put it back before starting it. */
export interface Delivery {
  id: string;
  started: boolean;
}

/** Where every message sent ended up: started by a worker once or more, still queued, or nowhere (lost). */
export interface Accounting {
  sent: number;
  /** Sent and started by a worker. */
  delivered: number;
  /** Starts and queued copies beyond the first of a message: each is one more time a worker would process it. */
  duplicates: number;
  /** Sent, not delivered, still in a queue (SQS, staging or the target). */
  waiting: number;
  /** Sent and found nowhere: neither delivered nor queued. */
  lost: number;
  /** Ids found that were never sent (should be none). */
  strangers: number;
}

/**
 * `deliveries`: every delivery to a worker, in any order, repeats included; `queued`: every copy
 * still queued when the run stopped. A delivery the worker put back unstarted counts for nothing:
 * the message is the queue's again, and found there it is waiting, not a duplicate (a worker takes
 * it once). A started one that is also queued is a duplicate: a worker would start it again.
 */
export function account(sent: Iterable<string>, deliveries: Iterable<Delivery>, queued: Iterable<string>): Accounting {
  const sentSet = new Set(sent);
  const seen = new Set<string>();
  const delivered = new Set<string>();
  const waiting = new Set<string>();
  let duplicates = 0;
  let strangers = 0;
  const note = (id: string, into: Set<string>) => {
    if (!sentSet.has(id)) return strangers++;
    if (seen.has(id)) duplicates++;
    seen.add(id);
    into.add(id);
  };
  for (const { id, started } of deliveries) if (started) note(id, delivered);
  for (const id of queued) note(id, waiting);
  for (const id of delivered) waiting.delete(id);
  return {
    sent: sentSet.size,
    delivered: delivered.size,
    duplicates,
    waiting: waiting.size,
    lost: sentSet.size - seen.size,
    strangers,
  };
}
