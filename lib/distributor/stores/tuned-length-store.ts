import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { FairwayError } from '../../platform/errors';

/** The length each tuned target used last, so that the next pass steps on from it. */
export interface TunedLengthStore {
  read(target: string): Promise<number | undefined>;
  /** Written under the target's lease: no other pass writes it meanwhile. */
  write(target: string, length: number, nowMs: number): Promise<void>;
}

const tunedKey = (target: string) => `tuned-length#${target}`;
const tunedItem = z.object({ length: z.number().int().min(0) });

/** TunedLengthStore in the distributor's state table, one item per target. */
export class DynamoTunedLengthStore implements TunedLengthStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async read(target: string): Promise<number | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: tunedKey(target) }, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const parsed = tunedItem.safeParse(Item);
    if (!parsed.success) {
      throw new FairwayError(
        `The item ${tunedKey(target)} in ${this.table} has no whole-number length; delete it and tuning starts again from the untuned length.`,
      );
    }
    return parsed.data.length;
  }

  async write(target: string, length: number, nowMs: number): Promise<void> {
    await this.doc.send(
      new PutCommand({ TableName: this.table, Item: { pk: tunedKey(target), length, updatedAt: nowMs } }),
    );
  }
}
