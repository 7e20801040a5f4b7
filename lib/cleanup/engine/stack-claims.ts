import { DeleteCommand, PutCommand, UpdateCommand, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure, isServerFault, throttlingBackOff, withBackOff } from '../../platform/aws';
import type { EncodedOperation } from './codec';
import { fillKey } from './keys';
import { conditionally, type StackItems, truncate } from './stack-items';
import type { StackReads } from './stack-reads';
import { type StackRecord, stackRecordSchema } from './stack-record';

export interface Claim {
  owner: string;
  now: number;
  leaseUntil: number;
}

/**
 * A step's hold on a stack item: the claim that takes a lease, the fill that starts a generation,
 * and the writes that end the hold (finish, release). Each is a single-item conditional write; every
 * write after the claim holds only while the step still owns its lease. A claim is also retried
 * after a 5xx, and reads the item back if its condition then fails: the claim that failed may be its
 * own. Other writes fail with a 5xx and the step ends; the lease covers it.
 */
export class StackClaims {
  constructor(
    private readonly items: StackItems,
    private readonly reads: StackReads,
  ) {}

  /** Takes an unclaimed (or expired) item and counts the attempt; the item as it now stands, or nothing if taken. */
  async claim(sk: string, claim: Claim): Promise<StackRecord | undefined> {
    const { items } = this;
    let ambiguous = false;
    const update = new UpdateCommand({
      TableName: items.table,
      Key: { pk: items.pk, sk },
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
          items.doc.send(update).catch((error: unknown) => {
            ambiguous ||= isServerFault(error);
            throw error;
          }),
        isServerFault,
        throttlingBackOff,
      );
      return items.parse(stackRecordSchema, Attributes ?? {});
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (!ambiguous) return undefined;
      // An earlier try answered 5xx: the claim the condition now refuses may be that try's.
      const item = await this.reads.get(sk);
      return item?.owner === claim.owner && item.leaseUntil === claim.leaseUntil ? item : undefined;
    }
  }

  /** Starts fill `generation` of the empty stack, already claimed; nothing if that fill exists (another invocation started it). */
  async createFill(generation: number, operation: EncodedOperation, claim: Claim): Promise<StackRecord | undefined> {
    const { items } = this;
    const item = {
      sk: fillKey(generation),
      ...operation,
      attempts: 1,
      owner: claim.owner,
      leaseUntil: claim.leaseUntil,
      filledAt: new Date(claim.now).toISOString(),
    };
    const created = await conditionally(
      items.doc.send(
        new PutCommand({
          TableName: items.table,
          Item: { pk: items.pk, ...item },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    return created ? items.parse(stackRecordSchema, item) : undefined;
  }

  /**
   * Takes a finished item off the stack: an operation is deleted; a fill is kept, marked done,
   * as the record that this generation was filled (so a late invocation never fills it again).
   */
  finish(item: StackRecord, owner: string, fill: boolean, error?: string): Promise<boolean> {
    const { items } = this;
    if (fill) {
      const setError = error ? ', lastError = :error' : '';
      return items.updateOwned(item.sk, owner, `SET done = :true${setError} REMOVE #owner, leaseUntil`, {
        ':true': true,
        ...(error ? { ':error': truncate(error) } : {}),
      });
    }
    return conditionally(
      items.doc.send(
        new DeleteCommand({
          TableName: items.table,
          Key: { pk: items.pk, sk: item.sk },
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner },
        }),
      ),
    );
  }

  /** Gives a failed operation back to the stack with its error, for another attempt. */
  release(sk: string, owner: string, error: string): Promise<boolean> {
    return this.items.updateOwned(sk, owner, 'SET lastError = :error REMOVE #owner, leaseUntil', {
      ':error': truncate(error),
    });
  }
}
