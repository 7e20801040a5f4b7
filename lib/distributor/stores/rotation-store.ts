import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { isConditionFailure } from '../../aws/dynamo';
import { type DocumentPort, retryingThrottled } from '../../aws/dynamo-faults';
import { FairwayError } from '../../errors';

/** Where a target's rotation of remainder units stands (docs/distributor.md "Plan"). */
export interface Rotation {
  cursor?: string;
  /** Optimistic lock: a write succeeds only over the version it read. */
  version: number;
}

/** The planner's rotation cursor per target, kept between passes. */
export interface RotationStore {
  readRotation(target: string): Promise<Rotation>;
  /** False if another pass wrote the rotation since `read` (the write is then dropped). */
  writeRotation(target: string, cursor: string, read: Rotation): Promise<boolean>;
}

const rotationKey = (target: string) => `rotation#${target}`;

/** A rotation item as the store writes it; anything else in the table is a fault, not a value to coerce. */
const rotationItem = z.object({
  cursor: z.string().optional(),
  version: z.number().int().min(0),
});

/** RotationStore in the DistributorStateTable (key `rotation#<target>`); every call retried when throttled. */
export class DynamoRotationStore implements RotationStore {
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
  ) {
    this.doc = retryingThrottled(doc);
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
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: rotationKey(target), cursor, version: read.version + 1 },
          ConditionExpression: 'attribute_not_exists(pk) OR version = :version',
          ExpressionAttributeValues: { ':version': read.version },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
