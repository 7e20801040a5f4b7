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

/**
 * A reaping mark older than this is a reaper that died: a touch overwrites it. The reaper issues
 * its delete only well within it (`REAP_DELETE_WITHIN_MS`), so a queue whose mark a router could
 * have overwritten is never deleted.
 */
export const REAPING_MARK_STALE_MS = 5 * 60_000;
/** The reaper deletes a queue only this soon after marking it; later, it gives the mark up. */
export const REAP_DELETE_WITHIN_MS = 60_000;

/** True while a reaping mark set at `reapingAt` still holds routers off at `nowMs`. */
export const isFreshMark = (reapingAt: number | undefined, nowMs: number): boolean =>
  reapingAt !== undefined && reapingAt > nowMs - REAPING_MARK_STALE_MS;

export interface StagingRegistry {
  /** Records that `queue` of `target` is in use at `nowMs`; refused while the reaper holds it. */
  touch(target: string, queue: string, nowMs: number): Promise<TouchOutcome>;
  /** Every staging queue recorded for `target`, in name order. */
  queuesOf(target: string): Promise<StagingQueueRecord[]>;
}

/** What the reaper does through the registry, each a single-item conditional write. */
export interface ReapingRegistry extends StagingRegistry {
  /**
   * Records a listed queue that has no record (declared before the registry, or its record lost),
   * touched at `nowMs`, so it is reaped only after a full period; false if a record exists.
   */
  adopt(target: string, queue: string, nowMs: number): Promise<boolean>;
  /**
   * Marks the queue being reaped at `nowMs`: only if its record was touched before `untouchedSince`
   * and holds no fresh mark. False when a router touched it meanwhile (or the record is gone).
   */
  markReaping(target: string, queue: string, untouchedSince: number, nowMs: number): Promise<boolean>;
  /** Deletes the record if it still carries the mark `reapingAt` (the queue is gone). */
  removeReaped(target: string, queue: string, reapingAt: number): Promise<void>;
  /** Clears the mark `reapingAt` (the broker refused the delete: the queue is in use). */
  clearMark(target: string, queue: string, reapingAt: number): Promise<void>;
  /** Adds `count` to the target's reaped total. */
  countReaped(target: string, count: number): Promise<void>;
  /** How many staging queues were reaped, per target, since the table was made. */
  reapedCounts(): Promise<Record<string, number>>;
}
