import type { DistributorReport, QueueSummary } from './report';
import { STORED_WAITS_PER_TARGET, type StagingWait, type TargetWaits, type WaitStore } from './stores/wait-store';
import { longestWaits } from './waits';

/** A target's waits record is written at most this often per container (it is the CLI's view, not a guarantee). */
const WAIT_RECORD_INTERVAL_MS = 10_000;

/** Records targets' longest staging waits for the CLI (none without a store). */
export function waitRecorder(
  waits: WaitStore | undefined,
  report: Pick<DistributorReport, 'waitsNotRecorded'>,
  now: () => number,
) {
  /** Per target, the waits measured since its record was last written (this container's passes). */
  const waitsSince = new Map<string, { writtenAt: number; queues: Map<string, StagingWait> }>();

  /**
   * Keeps the target's longest waits for the CLI: the first pass's at once, then at most every
   * WAIT_RECORD_INTERVAL_MS the longest of the passes since (one write per target per interval, not per
   * pass), with the noisiest tenants by backlog as the latest pass saw them. A failed write is
   * reported, never fails the target.
   */
  async function recordWaits(
    target: string,
    queues: readonly QueueSummary[],
    backlog?: TargetWaits['backlog'],
  ): Promise<void> {
    if (!waits) return;
    const since = waitsSince.get(target) ?? { writtenAt: -Infinity, queues: new Map<string, StagingWait>() };
    waitsSince.set(target, since);
    for (const { name, wait } of longestWaits(queues, STORED_WAITS_PER_TARGET)) {
      const kept = since.queues.get(name);
      if (!kept || wait.maxMs > kept.maxMs)
        since.queues.set(name, { queue: name, maxMs: wait.maxMs, p50Ms: wait.p50Ms, measured: wait.measured });
    }
    if (now() - since.writtenAt < WAIT_RECORD_INTERVAL_MS) return;
    const longest = [...since.queues.values()]
      .sort((a, b) => b.maxMs - a.maxMs || a.queue.localeCompare(b.queue))
      .slice(0, STORED_WAITS_PER_TARGET);
    since.writtenAt = now();
    since.queues.clear();
    await waits
      .record({ target, at: now(), queues: longest, ...(backlog ? { backlog } : {}) })
      .catch((error: unknown) => {
        report.waitsNotRecorded(target, error);
      });
  }

  return recordWaits;
}

/** A stint's queue figures so far with one refill's added, by queue (the latest depth and weight). */
export function mergeQueues(sofar: readonly QueueSummary[], added: readonly QueueSummary[]): QueueSummary[] {
  const merged = new Map(sofar.map((q) => [q.name, q]));
  for (const q of added) {
    const was = merged.get(q.name);
    merged.set(
      q.name,
      was
        ? {
            ...q,
            planned: was.planned + q.planned,
            moved: was.moved + q.moved,
            requeued: was.requeued + q.requeued,
            parked: was.parked + q.parked,
            ...longerWait(was, q),
          }
        : q,
    );
  }
  return [...merged.values()];
}

/** The longer of two figures' waits (none when neither has one). */
function longerWait(a: QueueSummary, b: QueueSummary): Pick<QueueSummary, 'wait'> {
  const wait = !a.wait || (b.wait && b.wait.maxMs > a.wait.maxMs) ? b.wait : a.wait;
  return wait ? { wait } : {};
}
