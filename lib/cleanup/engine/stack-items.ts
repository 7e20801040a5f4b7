import { GetCommand, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { z } from 'zod';
import { type DocumentPort, isConditionFailure, retryingThrottled } from '../../platform/aws';
import { stackPartition } from './keys';
import { parseItem } from './stack-record';

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

/** An error as stored on an item: cut to a length that keeps the item far below DynamoDB's limit. */
export const truncate = (text: string) =>
  text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;

/**
 * The items of one job's partitions in the cleanup table (lib/cleanup/engine/keys.ts): the calls
 * every part of the stack store shares. Every call is retried with back-off when throttled (nothing
 * was written); every item read is parsed into its record type (stack-record.ts).
 */
export class StackItems {
  /** The job's stack partition. */
  readonly pk: string;
  readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    readonly table: string,
    readonly job: string,
  ) {
    this.pk = stackPartition(job);
    this.doc = retryingThrottled(doc);
  }

  parse<T>(schema: z.ZodType<T>, item: Record<string, unknown>): T {
    return parseItem(schema, item, this.job);
  }

  /** One item by key (consistent read), parsed; nothing if absent. */
  async get<T>(pk: string, sk: string, schema: z.ZodType<T>): Promise<T | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk, sk }, ConsistentRead: true }),
    );
    return Item && this.parse(schema, Item);
  }

  /** One page of a partition's items under `prefix`, newest key first. */
  async query(pk: string, prefix: string, options: Partial<QueryCommandInput> = {}) {
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
  async queryAll(pk: string, prefix: string, projection?: string) {
    const items: Record<string, unknown>[] = [];
    let next: Record<string, unknown> | undefined;
    do {
      const page = await this.query(pk, prefix, { ProjectionExpression: projection, ExclusiveStartKey: next });
      items.push(...page.items);
      next = page.next;
    } while (next);
    return items;
  }

  /** An update of a stack item that applies only while `owner` still holds its claim; false once the claim was lost. */
  updateOwned(sk: string, owner: string, expression: string, values: Record<string, unknown>): Promise<boolean> {
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
}
