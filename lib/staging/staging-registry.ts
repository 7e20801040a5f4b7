import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { type DocumentPort, isConditionFailure, retryingThrottled } from '../platform/aws';
import { FairwayError } from '../platform/errors';
import { STAGING_SEPARATOR } from './staging-names';

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

/** The reaped totals' partition: no target is named so, since a target name never holds `»`. */
const REAPED_PK = `${STAGING_SEPARATOR}reaped`;

const recordItem = z.object({
  pk: z.string(),
  sk: z.string(),
  touchedAt: z.number(),
  reapingAt: z.number().optional(),
});

/** A mark that no longer holds routers off, or none: what a touch may overwrite. */
const NOT_HELD = '(attribute_not_exists(reapingAt) OR reapingAt < :stale)';

/**
 * StagingRegistry in STAGING_TABLE (`pk` target, `sk` queue): single-item conditional writes, each
 * retried when throttled (nothing was written). A retried write after a 5xx is not needed: a touch
 * or mark that failed on DynamoDB's side fails its records or skips its queue, both safe.
 */
export class DynamoStagingRegistry implements ReapingRegistry {
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
  ) {
    this.doc = retryingThrottled(doc);
  }

  async touch(target: string, queue: string, nowMs: number): Promise<TouchOutcome> {
    const written = await this.conditional(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: target, sk: queue },
        UpdateExpression: 'SET touchedAt = :now REMOVE reapingAt',
        ConditionExpression: NOT_HELD,
        ExpressionAttributeValues: { ':now': nowMs, ':stale': nowMs - REAPING_MARK_STALE_MS },
      }),
    );
    return written ? 'recorded' : 'reaping';
  }

  async queuesOf(target: string): Promise<StagingQueueRecord[]> {
    return (await this.partition(target)).map((raw) => {
      const parsed = recordItem.safeParse(raw);
      if (!parsed.success) {
        const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
        throw new FairwayError(`${this.table} item ${JSON.stringify(raw.sk)} of ${target} is malformed: ${fields}`);
      }
      const item = parsed.data;
      return {
        target: item.pk,
        queue: item.sk,
        touchedAt: item.touchedAt,
        ...(item.reapingAt === undefined ? {} : { reapingAt: item.reapingAt }),
      };
    }); // a query returns its range keys in order
  }

  adopt(target: string, queue: string, nowMs: number): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.table,
        Item: { pk: target, sk: queue, touchedAt: nowMs },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  markReaping(target: string, queue: string, untouchedSince: number, nowMs: number): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: target, sk: queue },
        UpdateExpression: 'SET reapingAt = :now',
        ConditionExpression: `touchedAt < :since AND ${NOT_HELD}`,
        ExpressionAttributeValues: { ':now': nowMs, ':since': untouchedSince, ':stale': nowMs - REAPING_MARK_STALE_MS },
      }),
    );
  }

  async removeReaped(target: string, queue: string, reapingAt: number): Promise<void> {
    await this.conditional(
      new DeleteCommand({
        TableName: this.table,
        Key: { pk: target, sk: queue },
        ConditionExpression: 'reapingAt = :mark',
        ExpressionAttributeValues: { ':mark': reapingAt },
      }),
    );
  }

  async clearMark(target: string, queue: string, reapingAt: number): Promise<void> {
    await this.conditional(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: target, sk: queue },
        UpdateExpression: 'REMOVE reapingAt',
        ConditionExpression: 'reapingAt = :mark',
        ExpressionAttributeValues: { ':mark': reapingAt },
      }),
    );
  }

  async countReaped(target: string, count: number): Promise<void> {
    if (count <= 0) return;
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: REAPED_PK, sk: target },
        UpdateExpression: 'ADD reaped :n',
        ExpressionAttributeValues: { ':n': count },
      }),
    );
  }

  async reapedCounts(): Promise<Record<string, number>> {
    const items = await this.partition(REAPED_PK);
    return Object.fromEntries(items.map((item) => [String(item.sk), Number(item.reaped ?? 0)]));
  }

  /** Every item of partition `pk`, page after page. */
  private async partition(pk: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** True if the conditional write was applied, false if its condition did not hold. */
  private async conditional(command: PutCommand | UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      await this.doc.send(command as UpdateCommand);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
