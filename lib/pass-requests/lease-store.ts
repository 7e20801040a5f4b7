import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { isConditionFailure } from '../aws/dynamo';
import {
  type DocumentPort,
  isServerFault,
  retryingThrottled,
  throttlingBackOff,
  withBackOff,
} from '../aws/dynamo-faults';
import { FairwayError } from '../errors';

/** What the lease item said when its holder gave it back. */
export interface Released {
  /** Someone asked for a pass while the lease was held, and no pass was started for it. */
  wanted: boolean;
}

/** What a request for a pass found (see `requestPass`). */
export type PassRequestOutcome =
  /** No pass holds or awaits the lease: the caller must start the pass it registered. */
  | 'start'
  /** A pass holds the lease: it was told, and asks for the next one when it ends. */
  | 'wanted'
  /** A pass was started for an earlier request and has not taken the lease yet: it will see the new work. */
  | 'pending';

/**
 * One lease per target, and on the lease item the requests for passes (docs/distributor.md
 * "Passes on demand"): the router asks through it, the distributor's passes hold it.
 */
export interface LeaseStore {
  /**
   * True if `owner` now holds the target until `expiresAt` (no one held it, or their lease expired
   * before `now`). Taking it clears `wanted`: the new holder measures after this and sees that work.
   * `requestId` is the request that started this pass: its pending mark is cleared too.
   */
  acquireLease(target: string, owner: string, now: number, expiresAt: number, requestId?: string): Promise<boolean>;
  /** Gives the lease back, if `owner` still holds it, and says whether a pass was wanted meanwhile. */
  releaseLease(target: string, owner: string): Promise<Released>;
  /**
   * Registers a request for a pass over `target`. With no live lease and no pending request (or one
   * overdue since before `now`), marks `requestId` pending until `dueBy` and answers `start`; with a
   * live lease, sets `wanted` for its holder. At most one request is ever pending per target.
   */
  requestPass(target: string, requestId: string, now: number, dueBy: number): Promise<PassRequestOutcome>;
  /**
   * A requested pass that found the lease held hands its request to the holder (`wanted`); false if
   * the lease was freed meanwhile (try the lease again) or the request is no longer pending.
   */
  handOver(target: string, requestId: string, now: number): Promise<boolean>;
  /** Clears the pending mark of `requestId` (its invoke failed), so that the next request starts a pass at once. */
  dropRequest(target: string, requestId: string): Promise<void>;
}

const leaseKey = (target: string) => `lease#${target}`;

/** The lease item: a holder (owner, expiresAt), a pending request (requestId, dueBy), a `wanted` time. */
const leaseItem = z.object({
  owner: z.string().optional(),
  expiresAt: z.number().optional(),
  requestId: z.string().optional(),
  dueBy: z.number().optional(),
  wantedAt: z.number().optional(),
});

const LEASE_FREE = '(attribute_not_exists(#owner) OR expiresAt < :now)';
const NO_PENDING = '(attribute_not_exists(requestId) OR dueBy < :now)';
/** Tries of the request's read-then-write before giving up (each lost race means someone else moved). */
const REQUEST_TRIES = 5;

/**
 * LeaseStore in the DistributorStateTable (key `pk`), single-item conditional writes only.
 * Every call is retried with back-off when throttled (nothing was written). Lease writes are also
 * retried after a 5xx: they name their owner, so a retried acquire whose condition fails reads the
 * lease back and knows whether its earlier try won, and a retried release removes only its own.
 */
export class DynamoLeaseStore implements LeaseStore {
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
  ) {
    this.doc = retryingThrottled(doc);
  }

  async acquireLease(
    target: string,
    owner: string,
    now: number,
    expiresAt: number,
    requestId?: string,
  ): Promise<boolean> {
    let ambiguous = false;
    const update = new UpdateCommand({
      TableName: this.table,
      Key: { pk: leaseKey(target) },
      UpdateExpression: 'SET #owner = :owner, expiresAt = :expiresAt, acquiredAt = :now REMOVE wantedAt',
      ConditionExpression: LEASE_FREE,
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': owner, ':expiresAt': expiresAt, ':now': now },
    });
    let acquired = await withBackOff(
      () =>
        this.conditional(update).catch((error: unknown) => {
          ambiguous ||= isServerFault(error);
          throw error;
        }),
      isServerFault,
      throttlingBackOff,
    );
    if (!acquired && ambiguous) {
      // An earlier try answered 5xx: its update may be what the condition now refuses.
      const item = await this.readLease(target);
      acquired = item.owner === owner && item.expiresAt === expiresAt;
    }
    if (acquired && requestId !== undefined) await this.dropRequest(target, requestId);
    return acquired;
  }

  async releaseLease(target: string, owner: string): Promise<Released> {
    const release = async (): Promise<Released> => {
      try {
        const { Attributes } = await this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: leaseKey(target) },
            UpdateExpression: 'REMOVE #owner, expiresAt, acquiredAt',
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return { wanted: Attributes?.wantedAt !== undefined };
      } catch (error) {
        if (isConditionFailure(error)) return { wanted: false };
        throw error;
      }
    };
    // A retry after a 5xx that had released finds the lease gone: `wanted` is then lost to the schedule.
    return withBackOff(release, isServerFault, throttlingBackOff);
  }

  async requestPass(target: string, requestId: string, now: number, dueBy: number): Promise<PassRequestOutcome> {
    for (let attempt = 0; attempt < REQUEST_TRIES; attempt++) {
      const item = await this.readLease(target);
      if (item.requestId !== undefined && (item.dueBy ?? 0) >= now) return 'pending';
      const leaseLive = item.owner !== undefined && (item.expiresAt ?? 0) >= now;
      if (leaseLive && item.wantedAt !== undefined) return 'wanted';
      const written = leaseLive
        ? await this.update(target, 'SET wantedAt = :now', `#owner = :holder AND expiresAt >= :now AND ${NO_PENDING}`, {
            ':now': now,
            ':holder': item.owner,
          })
        : await this.update(target, 'SET requestId = :requestId, dueBy = :dueBy', `${LEASE_FREE} AND ${NO_PENDING}`, {
            ':now': now,
            ':requestId': requestId,
            ':dueBy': dueBy,
          });
      if (written) return leaseLive ? 'wanted' : 'start';
    }
    throw new FairwayError(
      `The lease item ${leaseKey(target)} in ${this.table} changed under ${REQUEST_TRIES} requests in a row; the next request or the schedule starts the pass.`,
    );
  }

  async handOver(target: string, requestId: string, now: number): Promise<boolean> {
    return this.update(
      target,
      'SET wantedAt = :now REMOVE requestId, dueBy',
      'requestId = :requestId AND attribute_exists(#owner) AND expiresAt >= :now',
      { ':now': now, ':requestId': requestId },
    );
  }

  async dropRequest(target: string, requestId: string): Promise<void> {
    await this.update(target, 'REMOVE requestId, dueBy', 'requestId = :requestId', { ':requestId': requestId });
  }

  private async readLease(target: string) {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: leaseKey(target) }, ConsistentRead: true }),
    );
    const parsed = leaseItem.safeParse(Item ?? {});
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
      throw new FairwayError(
        `The lease item ${leaseKey(target)} in ${this.table} is malformed (${fields}); delete it and the next pass starts afresh.`,
      );
    }
    return parsed.data;
  }

  private update(target: string, expression: string, condition: string, values: Record<string, unknown>) {
    const names = /#owner/.test(`${expression} ${condition}`)
      ? { ExpressionAttributeNames: { '#owner': 'owner' } }
      : {};
    return this.conditional(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: leaseKey(target) },
        UpdateExpression: expression,
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
        ...names,
      }),
    );
  }

  private async conditional(command: UpdateCommand): Promise<boolean> {
    try {
      await this.doc.send(command);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
