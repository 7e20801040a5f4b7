/**
 * The staging queues the router declared, per target: a pass reads its target's staging queues here
 * instead of listing the vhost (docs/distributor.md "Discovery"), and the reaper deletes a queue only
 * through it (docs/router.md "Staging-queue lifecycle"). DynamoDB table STAGING_TABLE: `pk` = target,
 * `sk` = staging queue name.
 */
export interface StagingQueueRecord {
  target: string;
  queue: string;
  /** Epoch ms of the latest touch: a router declared it, or a backstop listing found it. */
  touchedAt: number;
  /** Set while the reaper deletes the queue: no router publishes to it until the record is gone. */
  reapingAt?: number;
}

/** What a touch found: recorded, or the queue is being reaped (its records wait and are retried). */
export type TouchOutcome = 'recorded' | 'reaping';

export interface StagingRegistry {
  /** Records that `queue` of `target` is in use at `nowMs`; refused while the reaper holds it. */
  touch(target: string, queue: string, nowMs: number): Promise<TouchOutcome>;
  /** Every staging queue recorded for `target`, in name order. */
  queuesOf(target: string): Promise<StagingQueueRecord[]>;
}
