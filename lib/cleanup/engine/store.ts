import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../../aws/dynamo';
import {
  type DocumentPort,
  isServerFault,
  retryingThrottled,
  throttlingBackOff,
  withBackOff,
} from '../../aws/dynamo-faults';
import type { EncodedOperation, PlacedOperation, PushPlan } from './codec';
import { deadLetterPartition, FILL_PREFIX, fillKey, OPERATION_PREFIX, SEQUENCE_KEY, stackPartition } from './keys';

/** The one DynamoDB call the engine makes; tests wrap it to inject failures at any call. */
export type { DocumentPort };

/** An item of the stack as stored; the engine validates the operation fields before running anything. */
export type StackItem = Record<string, unknown> & { sk: string };

/** What a Query of the stack returns per item: enough to choose what to claim, not the payloads. */
export interface Candidate {
  sk: string;
  parent?: string;
  leaseUntil?: number;
}

export interface Claim {
  owner: string;
  now: number;
  leaseUntil: number;
}

const BATCH_WRITE_TRIES = 10;
const MAX_ERROR_LENGTH = 2000;

/** Runs a conditional write; `false` when its condition did not hold (someone else got there first). */
export async function conditionally(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Every read and write of one job's stack. Each write is a single-item conditional write
 * (DESIGN.md): claims take a lease, and every later write of a step holds only while the
 * step still owns that lease. Children are the one exception (a batch put), which is safe
 * because nobody claims a child while its parent is still on the stack.
 *
 * Every call is retried with back-off when throttled (nothing was written). A claim is also
 * retried after a 5xx, and reads the item back if its condition then fails: the claim that
 * failed may be its own. Other writes fail with a 5xx and the step ends; the lease covers it.
 */
export class StackStore {
  private readonly pk: string;
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
    private readonly job: string,
    private readonly batchSize = 25,
  ) {
    this.pk = stackPartition(job);
    this.doc = retryingThrottled(doc);
  }

  /** A page of operations, newest first. */
  async topOperations(limit: number, startKey?: Record<string, unknown>) {
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': this.pk, ':prefix': OPERATION_PREFIX },
        ProjectionExpression: 'sk, parent, leaseUntil',
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
        ExclusiveStartKey: startKey,
      }),
    );
    return { items: (page.Items ?? []) as Candidate[], next: page.LastEvaluatedKey };
  }

  /** The most recent fill of the stack, if it was ever filled. */
  async latestFill(): Promise<StackItem | undefined> {
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': this.pk, ':prefix': FILL_PREFIX },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return page.Items?.[0] as StackItem | undefined;
  }

  async get(sk: string): Promise<StackItem | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: this.pk, sk }, ConsistentRead: true }),
    );
    return Item as StackItem | undefined;
  }

  /** Takes an unclaimed (or expired) item and counts the attempt; the item as it now stands, or nothing if taken. */
  async claim(sk: string, claim: Claim): Promise<StackItem | undefined> {
    let ambiguous = false;
    const update = new UpdateCommand({
      TableName: this.table,
      Key: { pk: this.pk, sk },
      UpdateExpression: 'SET #owner = :owner, leaseUntil = :until ADD attempts :one',
      ConditionExpression:
        'attribute_exists(sk) AND attribute_not_exists(done) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': claim.owner, ':until': claim.leaseUntil, ':now': claim.now, ':one': 1 },
      ReturnValues: 'ALL_NEW',
    });
    try {
      const { Attributes } = await withBackOff<UpdateCommandOutput>(
        () =>
          this.doc.send(update).catch((error: unknown) => {
            ambiguous ||= isServerFault(error);
            throw error;
          }),
        isServerFault,
        throttlingBackOff,
      );
      return Attributes as StackItem;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (!ambiguous) return undefined;
      // An earlier try answered 5xx: the claim the condition now refuses may be that try's.
      const item = await this.get(sk);
      return item?.owner === claim.owner && item.leaseUntil === claim.leaseUntil ? item : undefined;
    }
  }

  /** Starts fill `generation` of the empty stack, already claimed; nothing if that fill exists (another invocation started it). */
  async createFill(generation: number, operation: EncodedOperation, claim: Claim): Promise<StackItem | undefined> {
    const item: StackItem = {
      pk: this.pk,
      sk: fillKey(generation),
      ...operation,
      attempts: 1,
      owner: claim.owner,
      leaseUntil: claim.leaseUntil,
      filledAt: new Date(claim.now).toISOString(),
    };
    const created = await conditionally(
      this.doc.send(
        new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(sk)' }),
      ),
    );
    return created ? item : undefined;
  }

  /** The next push sequence of this job (atomic counter). */
  async nextSequence(): Promise<number> {
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: this.pk, sk: SEQUENCE_KEY },
        UpdateExpression: 'ADD #value :one',
        ExpressionAttributeNames: { '#value': 'value' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Attributes!.value as number;
  }

  /** Records where the children go, before any is written, so that a retry writes the same keys. */
  recordPlan(sk: string, owner: string, plan: PushPlan): Promise<boolean> {
    return this.updateOwned(sk, owner, 'SET pushSequence = :sequence, shuffleSeed = :seed', {
      ':sequence': plan.sequence,
      ':seed': plan.shuffleSeed,
    });
  }

  /** Writes the children in batches; a retried step writes the same keys again, overwriting, never duplicating. */
  async push(children: readonly PlacedOperation[], pushedAt: number): Promise<void> {
    const at = new Date(pushedAt).toISOString();
    for (let start = 0; start < children.length; start += this.batchSize) {
      let requests = children.slice(start, start + this.batchSize).map((child) => ({
        PutRequest: { Item: { pk: this.pk, ...child, attempts: 0, pushedAt: at } },
      }));
      for (let tries = 1; requests.length > 0; tries++) {
        if (tries > BATCH_WRITE_TRIES) {
          throw new Error(
            `DynamoDB left ${requests.length} children of job ${this.job} unprocessed after ${BATCH_WRITE_TRIES} tries`,
          );
        }
        if (tries > 1) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** tries));
        const { UnprocessedItems } = await this.doc.send(
          new BatchWriteCommand({ RequestItems: { [this.table]: requests } }),
        );
        requests = (UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  /**
   * Takes a finished item off the stack: an operation is deleted; a fill is kept, marked done,
   * as the record that this generation was filled (so a late invocation never fills it again).
   */
  finish(item: StackItem, owner: string, fill: boolean, error?: string): Promise<boolean> {
    if (fill) {
      const setError = error ? ', lastError = :error' : '';
      return this.updateOwned(item.sk, owner, `SET done = :true${setError} REMOVE #owner, leaseUntil`, {
        ':true': true,
        ...(error ? { ':error': truncate(error) } : {}),
      });
    }
    return conditionally(
      this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: this.pk, sk: item.sk },
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner },
        }),
      ),
    );
  }

  /** Gives a failed operation back to the stack with its error, for another attempt. */
  release(sk: string, owner: string, error: string): Promise<boolean> {
    return this.updateOwned(sk, owner, 'SET lastError = :error REMOVE #owner, leaseUntil', {
      ':error': truncate(error),
    });
  }

  /** An update that applies only while `owner` still holds the item's claim; false once the claim was lost. */
  private updateOwned(
    sk: string,
    owner: string,
    expression: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    return conditionally(
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: this.pk, sk },
          UpdateExpression: expression,
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner, ...values },
        }),
      ),
    );
  }

  /**
   * Sets an item aside in the job's dead-letter partition with its error, then takes it off the
   * stack. The first dead letter of an item is kept if a crash makes this run twice.
   */
  async deadLetter(item: StackItem, owner: string, fill: boolean, error: string, now: number): Promise<boolean> {
    const { owner: _owner, leaseUntil: _lease, pk: _pk, ...kept } = item;
    await conditionally(
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...kept,
            pk: deadLetterPartition(this.job),
            error: truncate(error),
            deadAt: new Date(now).toISOString(),
          },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    return this.finish(item, owner, fill, error);
  }
}

const truncate = (text: string) => (text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text);
