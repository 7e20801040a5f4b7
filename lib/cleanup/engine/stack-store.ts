import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type { z } from 'zod';
import { isConditionFailure } from '../../aws/dynamo';
import {
  type DocumentPort,
  isServerFault,
  retryingThrottled,
  throttlingBackOff,
  withBackOff,
} from '../../aws/dynamo-faults';
import { FairwayError } from '../../errors';
import type { EncodedOperation, PlacedOperation, PushPlan } from './codec';
import {
  deadLetterPartition,
  FILL_PREFIX,
  fillKey,
  markKey,
  OPERATION_PREFIX,
  operationKey,
  SEQUENCE_KEY,
  stackPartition,
} from './keys';
import {
  candidateSchema,
  type DeadLetterRecord,
  deadLetterSchema,
  markSchema,
  parseItem,
  type StackRecord,
  sequenceSchema,
  stackRecordSchema,
} from './stack-record';

/** The one DynamoDB call the engine makes; tests wrap it to inject failures at any call. */
export type { DocumentPort };

export interface Claim {
  owner: string;
  now: number;
  leaseUntil: number;
}

const BATCH_WRITE_TRIES = 10;
const MAX_ERROR_LENGTH = 2000;

/** Runs a conditional write; `false` when its condition did not hold (someone else got there first). */
async function conditionally(write: Promise<unknown>): Promise<boolean> {
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

  /** A page of operations, newest first: their keys, parents and leases, not their payloads. */
  async topOperations(limit: number, startKey?: Record<string, unknown>) {
    const page = await this.query(this.pk, OPERATION_PREFIX, {
      ProjectionExpression: 'sk, parent, leaseUntil',
      ConsistentRead: true,
      Limit: limit,
      ExclusiveStartKey: startKey,
    });
    return { items: page.items.map((item) => this.parse(candidateSchema, item)), next: page.next };
  }

  /** Every operation of the stack, newest first, with its kind and lease (one read per ~1 MB). */
  async allOperations(): Promise<StackRecord[]> {
    const items = await this.queryAll(this.pk, OPERATION_PREFIX, 'sk, kind, leaseUntil');
    return items.map((item) => this.parse(stackRecordSchema, item));
  }

  /** The most recent fill of the stack, if it was ever filled. */
  async latestFill(): Promise<StackRecord | undefined> {
    const page = await this.query(this.pk, FILL_PREFIX, { ConsistentRead: true, Limit: 1 });
    const [item] = page.items;
    return item && this.parse(stackRecordSchema, item);
  }

  async get(sk: string): Promise<StackRecord | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: this.pk, sk }, ConsistentRead: true }),
    );
    return Item && this.parse(stackRecordSchema, Item);
  }

  /** Takes an unclaimed (or expired) item and counts the attempt; the item as it now stands, or nothing if taken. */
  async claim(sk: string, claim: Claim): Promise<StackRecord | undefined> {
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
      return this.parse(stackRecordSchema, Attributes ?? {});
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (!ambiguous) return undefined;
      // An earlier try answered 5xx: the claim the condition now refuses may be that try's.
      const item = await this.get(sk);
      return item?.owner === claim.owner && item.leaseUntil === claim.leaseUntil ? item : undefined;
    }
  }

  /** Starts fill `generation` of the empty stack, already claimed; nothing if that fill exists (another invocation started it). */
  async createFill(generation: number, operation: EncodedOperation, claim: Claim): Promise<StackRecord | undefined> {
    const item = {
      sk: fillKey(generation),
      ...operation,
      attempts: 1,
      owner: claim.owner,
      leaseUntil: claim.leaseUntil,
      filledAt: new Date(claim.now).toISOString(),
    };
    const created = await conditionally(
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: this.pk, ...item },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    return created ? this.parse(stackRecordSchema, item) : undefined;
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
    return this.parse(sequenceSchema, { sk: SEQUENCE_KEY, ...Attributes }).value;
  }

  /** The time recorded under mark `name` (epoch ms), if any. */
  async mark(name: string): Promise<number | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: this.pk, sk: markKey(name) }, ConsistentRead: true }),
    );
    return Item && this.parse(markSchema, Item).at;
  }

  /**
   * Records `at` (epoch ms) under mark `name` unless a later time is there: of concurrent or late
   * writers (a pass that finished after a newer one) the latest time stands, whatever their order.
   */
  async advanceMark(name: string, at: number): Promise<void> {
    await conditionally(
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: this.pk, sk: markKey(name) },
          UpdateExpression: 'SET #at = :at, #time = :time',
          ConditionExpression: 'attribute_not_exists(#at) OR #at < :at',
          ExpressionAttributeNames: { '#at': 'at', '#time': 'time' },
          ExpressionAttributeValues: { ':at': at, ':time': new Date(at).toISOString() },
        }),
      ),
    );
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
          throw new FairwayError(
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
  finish(item: StackRecord, owner: string, fill: boolean, error?: string): Promise<boolean> {
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
  async deadLetter(item: StackRecord, owner: string, fill: boolean, error: string, now: number): Promise<boolean> {
    const { owner: _owner, leaseUntil: _lease, ...kept } = item;
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

  /** Every dead letter of the job, newest key first. */
  async deadLetters(): Promise<DeadLetterRecord[]> {
    const items = await this.queryAll(deadLetterPartition(this.job), '');
    return items.map((item) => this.parse(deadLetterSchema, item));
  }

  async getDeadLetter(sk: string): Promise<DeadLetterRecord | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: deadLetterPartition(this.job), sk }, ConsistentRead: true }),
    );
    return Item && this.parse(deadLetterSchema, Item);
  }

  /**
   * Puts a dead letter back on top of the stack with its attempts reset. The new key is recorded on
   * the dead letter first, so a requeue run again after a failure reuses it; then the dead letter goes.
   */
  async requeue(dead: DeadLetterRecord): Promise<string> {
    let target = dead.requeuedAs;
    if (!target) {
      target = operationKey(await this.nextSequence(), 0);
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: deadLetterPartition(this.job), sk: dead.sk },
          UpdateExpression: 'SET requeuedAs = :target',
          ConditionExpression: 'attribute_not_exists(requeuedAs)',
          ExpressionAttributeValues: { ':target': target },
        }),
      );
    }
    await conditionally(
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: this.pk, sk: target, kind: dead.kind, payload: dead.payload, attempts: 0, requeuedFrom: dead.sk },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    await this.deleteDeadLetter(dead.sk);
    return target;
  }

  async deleteDeadLetter(sk: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: deadLetterPartition(this.job), sk } }));
  }

  private parse<T>(schema: z.ZodType<T>, item: Record<string, unknown>): T {
    return parseItem(schema, item, this.job);
  }

  /** One page of a partition's items under `prefix`, newest key first. */
  private async query(pk: string, prefix: string, options: Partial<QueryCommandInput> = {}) {
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
        ScanIndexForward: false,
        ...options,
      }),
    );
    return { items: page.Items ?? [], next: page.LastEvaluatedKey };
  }

  /** Every item of a partition under `prefix`, page by page. */
  private async queryAll(pk: string, prefix: string, projection?: string) {
    const items: Record<string, unknown>[] = [];
    let next: Record<string, unknown> | undefined;
    do {
      const page = await this.query(pk, prefix, { ProjectionExpression: projection, ExclusiveStartKey: next });
      items.push(...page.items);
      next = page.next;
    } while (next);
    return items;
  }
}

const truncate = (text: string) => (text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text);
