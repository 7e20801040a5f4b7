import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateScan,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { type DocumentPort, isConditionFailure, retryingThrottled } from '../../platform/aws';
import { FairwayError } from '../../platform/errors';
import { type CheckResult, countsFrom, type TenantPriorityRules, type TenantState } from './rules';

/** Applies checks of SPEC §1 to a tenant's shared counter. */
export interface TenantCounterStore {
  /**
   * `k` checks of one tenant, in order, as one atomic step: never loses a concurrent check. The
   * levels are the result; a check answered from a container's memory (RememberingCounterStore)
   * has that container's view of the count, which other containers' checks may have moved further.
   */
  check(tenantId: string, k: number, nowMs: number): Promise<CheckResult>;
}

/** Which conditional write a check tries first: the one its caller expects to succeed. */
export type FirstTry = 'decrement' | 'reset';

/** A check's result, and whether its write started the tenant afresh (its first check counted from 0). */
export interface StoredCheck extends CheckResult {
  reset: boolean;
}

/** One tenant's counter as stored. */
export interface TenantCounter extends TenantState {
  tenantId: string;
}

/** The item layout, read back at this boundary only: `pk` = tenant id. */
const counterItem = z.object({ pk: z.string(), pendingCount: z.number().int(), lastUpdateMs: z.number().int() });
/** What the conditional ADD returns (ReturnValues UPDATED_NEW). */
const updatedCount = counterItem.pick({ pendingCount: true });

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
}

/**
 * The counters in DynamoDB, one item per tenant (`pk` = tenant id, `pendingCount`, `lastUpdateMs`),
 * with single-item conditional writes only. Each attempt is one write:
 *
 * - a tenant updated within the interval gets an atomic `ADD -k`, conditional on the item being
 *   fresh; DynamoDB serialises concurrent ADDs, so none is lost and each sees a distinct count;
 * - otherwise the count is reset with a put conditional on the item still being missing or
 *   expired. Of two invocations that both saw it expired, only the first reset succeeds: the
 *   second finds a fresh item and falls back to the ADD, so a tenant is never reset twice.
 *
 * A failed condition still costs a write, so a caller that knows which branch applies (it wrote the
 * tenant recently, or long ago) says which to try first (RememberingCounterStore).
 * A failed condition means another writer moved the item in between; the loop retries the other
 * branch, backing off with jitter only after a full round so a busy tenant does not stall.
 *
 * A throttled write wrote nothing and is retried with back-off. A 5xx is not: the ADD may have
 * been applied, and the check fails (its records go back to SQS) rather than count twice now.
 */
export class DynamoTenantCounterStore implements TenantCounterStore {
  private readonly doc: DocumentPort;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly rules: TenantPriorityRules,
    private readonly retry: RetryPolicy = { maxAttempts: 8, baseDelayMs: 10 },
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.doc = retryingThrottled(client);
  }

  async check(tenantId: string, k: number, nowMs: number, firstTry: FirstTry = 'decrement'): Promise<StoredCheck> {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`check: k must be a positive integer, got ${k}`);
    const freshSince = nowMs - this.rules.resetIntervalMs;
    const decrement = async () => {
      const decremented = await this.decrementIfFresh(tenantId, k, nowMs, freshSince);
      return decremented === undefined
        ? undefined
        : { ...countsFrom(decremented + k - 1, k, nowMs, this.rules), reset: false };
    };
    const reset = async () =>
      (await this.resetIfExpired(tenantId, k, nowMs, freshSince))
        ? { ...countsFrom(0, k, nowMs, this.rules), reset: true }
        : undefined;
    const [first, second] = firstTry === 'decrement' ? [decrement, reset] : [reset, decrement];
    for (let attempt = 0; attempt < this.retry.maxAttempts; attempt++) {
      if (attempt > 0) await this.sleep(Math.random() * this.retry.baseDelayMs * 2 ** Math.min(attempt, 6));
      const done = (await first()) ?? (await second());
      if (done !== undefined) return done;
    }
    throw new FairwayError(
      `Tenant counter of ${JSON.stringify(tenantId)} kept changing under ${this.retry.maxAttempts} attempts; try again`,
    );
  }

  /**
   * The tenant's counter as last written, or undefined if it has none: an eventually consistent
   * read, which may miss the latest writes (RememberingCounterStore only relies on what it shows).
   */
  async peek(tenantId: string): Promise<TenantState | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { pk: tenantId } }));
    if (Item === undefined) return undefined;
    const { pendingCount, lastUpdateMs } = this.parse(counterItem, Item);
    return { count: pendingCount, lastUpdateMs };
  }

  /** Every tenant's counter (one paged Scan): an operator's view, not a hot path. */
  async list(): Promise<TenantCounter[]> {
    const counters: TenantCounter[] = [];
    for await (const page of paginateScan({ client: this.client }, { TableName: this.tableName })) {
      for (const item of page.Items ?? []) {
        const { pk, pendingCount, lastUpdateMs } = this.parse(counterItem, item);
        counters.push({ tenantId: pk, count: pendingCount, lastUpdateMs });
      }
    }
    return counters;
  }

  /** Deletes a tenant's counter, so its next check starts afresh; false if it had none. */
  async forget(tenantId: string): Promise<boolean> {
    const { Attributes } = await this.doc.send(
      new DeleteCommand({ TableName: this.tableName, Key: { pk: tenantId }, ReturnValues: 'ALL_OLD' }),
    );
    return Attributes !== undefined;
  }

  /** The count after subtracting k, or undefined if the item is missing or expired. */
  private async decrementIfFresh(tenantId: string, k: number, nowMs: number, freshSince: number) {
    return onConditionFailed(async () => {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: tenantId },
          UpdateExpression: 'ADD pendingCount :minusK SET lastUpdateMs = :now',
          ConditionExpression: 'attribute_exists(pk) AND lastUpdateMs >= :freshSince',
          ExpressionAttributeValues: { ':minusK': -k, ':now': nowMs, ':freshSince': freshSince },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return this.parse(updatedCount, Attributes).pendingCount;
    });
  }

  /** True if this call reset the counter (and applied its k checks), false if the item is fresh. */
  private async resetIfExpired(tenantId: string, k: number, nowMs: number, freshSince: number) {
    const reset = await onConditionFailed(async () => {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: tenantId, pendingCount: -(k - 1), lastUpdateMs: nowMs },
          ConditionExpression: 'attribute_not_exists(pk) OR lastUpdateMs < :freshSince',
          ExpressionAttributeValues: { ':freshSince': freshSince },
        }),
      );
      return true;
    });
    return reset ?? false;
  }

  /** A stored item as a typed record; the error names the table and the fields, never a value. */
  private parse<S extends z.ZodType>(schema: S, item: unknown): z.infer<S> {
    const result = schema.safeParse(item);
    if (result.success) return result.data;
    const fields = result.error.issues.map((issue) => `${issue.path.join('.') || '(item)'}: ${issue.message}`);
    throw new FairwayError(`Table ${this.tableName} holds a tenant counter Fairway cannot read (${fields.join('; ')})`);
  }
}

async function onConditionFailed<T>(write: () => Promise<T>): Promise<T | undefined> {
  try {
    return await write();
  } catch (error) {
    if (isConditionFailure(error)) {
      return undefined;
    }
    throw error;
  }
}
