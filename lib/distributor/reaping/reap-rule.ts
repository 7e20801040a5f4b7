import { isFreshMark, type StagingQueueRecord } from '../../staging/staging-registry';

/** A staging queue of the target as the backstop's management listing shows it. */
export interface ListedStagingQueue {
  name: string;
  /** Ready + unacknowledged, as of the last stats refresh. */
  messages: number;
  /** Absent when the listing does not say: the delete's if-unused still refuses a consumed queue. */
  consumers?: number;
  /** `classic`, `quorum` or `stream`; absent from an API too old to say (classic). */
  type?: string;
}

/** What the reaper does for one target, by queue name (each list in name order). */
export interface ReapPlan {
  /** Listed without a record: recorded now, reaped only after a whole period. */
  adopt: string[];
  /** Listed, empty, unused, classic and untouched for the period: marked, then deleted if the broker agrees. */
  reap: string[];
  /** Recorded, untouched for the period, and not listed (the queue is gone): the record is pruned. */
  prune: string[];
}

/**
 * Only a classic queue is deleted: RabbitMQ (3.x and 4.x) refuses queue.delete with if-empty or
 * if-unused on a quorum queue with NOT_IMPLEMENTED, a connection error, and without them a delete
 * could drop a message (docs/router.md "Staging-queue lifecycle").
 */
const reapableType = (type: string | undefined) => type === undefined || type === 'classic';

/**
 * Pure. The listing's counts lag about 5 s, so they only choose the candidates: the registry's
 * conditional mark and the broker's if-empty/if-unused delete decide. `reapAfterMs` 0 reaps nothing.
 */
export function planReaping(
  records: readonly StagingQueueRecord[],
  listed: readonly ListedStagingQueue[],
  reapAfterMs: number,
  nowMs: number,
): ReapPlan {
  const plan: ReapPlan = { adopt: [], reap: [], prune: [] };
  const recorded = new Map(records.map((r) => [r.queue, r]));
  const untouched = (r: StagingQueueRecord) => r.touchedAt < nowMs - reapAfterMs && !isFreshMark(r.reapingAt, nowMs);
  for (const queue of listed) {
    const record = recorded.get(queue.name);
    if (!record) plan.adopt.push(queue.name);
    else if (
      reapAfterMs > 0 &&
      untouched(record) &&
      queue.messages === 0 &&
      (queue.consumers ?? 0) === 0 &&
      reapableType(queue.type)
    )
      plan.reap.push(queue.name);
  }
  const listedNames = new Set(listed.map((q) => q.name));
  if (reapAfterMs > 0) {
    for (const record of records)
      if (!listedNames.has(record.queue) && untouched(record)) plan.prune.push(record.queue);
  }
  for (const list of Object.values(plan)) list.sort();
  return plan;
}
