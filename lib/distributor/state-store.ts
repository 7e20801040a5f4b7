import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { isConditionFailure } from '../aws/dynamo';
import { FairwayError } from '../errors';

export interface Rotation {
  cursor?: string;
  /** Optimistic lock: a write succeeds only over the version it read. */
  version: number;
}

/** What a pass keeps between invocations: one lease per target, and the planner's rotation cursor. */
export interface DistributorState {
  /** True if `owner` now holds the target until `expiresAt` (no one held it, or their lease expired before `now`). */
  acquireLease(target: string, owner: string, now: number, expiresAt: number): Promise<boolean>;
  /** Gives the lease back, if `owner` still holds it. */
  releaseLease(target: string, owner: string): Promise<void>;
  readRotation(target: string): Promise<Rotation>;
  /** False if another pass wrote the rotation since `read` (the write is then dropped). */
  writeRotation(target: string, cursor: string, read: Rotation): Promise<boolean>;
}

const leaseKey = (target: string) => `lease#${target}`;
const rotationKey = (target: string) => `rotation#${target}`;

/** A rotation item as the store writes it; anything else in the table is a fault, not a value to coerce. */
const rotationItem = z.object({
  cursor: z.string().optional(),
  version: z.number().int().min(0),
});

/** DistributorState in the DistributorStateTable (key `pk`), single-item conditional writes only. */
export class DynamoDistributorState implements DistributorState {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async acquireLease(target: string, owner: string, now: number, expiresAt: number): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.table,
        Item: { pk: leaseKey(target), owner, expiresAt, acquiredAt: now },
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
  }

  async releaseLease(target: string, owner: string): Promise<void> {
    await this.conditional(
      new DeleteCommand({
        TableName: this.table,
        Key: { pk: leaseKey(target) },
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      }),
    );
  }

  async readRotation(target: string): Promise<Rotation> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: rotationKey(target) }, ConsistentRead: true }),
    );
    if (Item === undefined) return { version: 0 };
    const parsed = rotationItem.safeParse(Item);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new FairwayError(
        `The rotation item ${rotationKey(target)} in ${this.table} is malformed (${fields}); delete it and the next pass starts a new rotation.`,
      );
    }
    return parsed.data;
  }

  async writeRotation(target: string, cursor: string, read: Rotation): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.table,
        Item: { pk: rotationKey(target), cursor, version: read.version + 1 },
        ConditionExpression: 'attribute_not_exists(pk) OR version = :version',
        ExpressionAttributeValues: { ':version': read.version },
      }),
    );
  }

  private async conditional(command: PutCommand | DeleteCommand): Promise<boolean> {
    try {
      await this.doc.send(command as PutCommand);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
