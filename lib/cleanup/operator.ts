import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deadLetterPartition, fillGeneration, OPERATION_PREFIX, operationKey, stackPartition } from './engine/keys';
import { conditionally, type DocumentPort, StackStore } from './engine/stack-store';

/** One operation as an operator sees it. */
export interface OperationView {
  sk: string;
  kind: string;
  attempts: number;
  /** Set while an invocation holds the operation. */
  claimedUntil?: string;
  lastError?: string;
  payload: unknown;
}

export interface StackSummary {
  job: string;
  size: number;
  claimed: number;
  byKind: Record<string, number>;
  /** The next operations to run, newest first. */
  top: OperationView[];
  lastFill?: { generation: number; done: boolean; filledAt?: string; error?: string };
}

export interface DeadLetter extends OperationView {
  error: string;
  deadAt: string;
}

type Item = Record<string, unknown>;

const readPayload = (text: unknown) => {
  try {
    return JSON.parse(String(text)) as unknown;
  } catch {
    return text;
  }
};

const view = (item: Item): OperationView => ({
  sk: String(item.sk),
  kind: String(item.kind),
  attempts: Number(item.attempts ?? 0),
  ...(typeof item.leaseUntil === 'number' ? { claimedUntil: new Date(item.leaseUntil).toISOString() } : {}),
  ...(typeof item.lastError === 'string' ? { lastError: item.lastError } : {}),
  payload: readPayload(item.payload),
});

/**
 * What an operator (and the CLI) can see and do on a job's stack: its size, its top and its
 * counts by kind; its dead letters; requeue or drop a dead letter. Reading the whole stack
 * pages through it, so `stack()` costs one read per ~1 MB of operations.
 */
export function createCleanupOperator(doc: DocumentPort, table: string) {
  async function queryAll(pk: string, prefix: string, projection?: string): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
          ProjectionExpression: projection,
          ScanIndexForward: false,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...((page.Items ?? []) as Item[]));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  async function stack(job: string, top = 10): Promise<StackSummary> {
    const operations = await queryAll(stackPartition(job), OPERATION_PREFIX, 'sk, kind, leaseUntil');
    const now = Date.now();
    const byKind: Record<string, number> = {};
    for (const op of operations) byKind[String(op.kind)] = (byKind[String(op.kind)] ?? 0) + 1;
    const shown = await Promise.all(
      operations.slice(0, top).map(async (op) => {
        const { Item } = await doc.send(
          new GetCommand({ TableName: table, Key: { pk: stackPartition(job), sk: op.sk } }),
        );
        return Item ? [view(Item)] : [];
      }),
    );
    const fill = await new StackStore(doc, table, job).latestFill();
    return {
      job,
      size: operations.length,
      claimed: operations.filter((op) => typeof op.leaseUntil === 'number' && op.leaseUntil >= now).length,
      byKind,
      top: shown.flat(),
      ...(fill
        ? {
            lastFill: {
              generation: fillGeneration(fill.sk),
              done: fill.done === true,
              ...(typeof fill.filledAt === 'string' ? { filledAt: fill.filledAt } : {}),
              ...(typeof fill.lastError === 'string' ? { error: fill.lastError } : {}),
            },
          }
        : {}),
    };
  }

  async function deadLetters(job: string): Promise<DeadLetter[]> {
    const items = await queryAll(deadLetterPartition(job), '');
    return items.map((item) => ({ ...view(item), error: String(item.error), deadAt: String(item.deadAt) }));
  }

  async function deadLetter(job: string, sk: string): Promise<Item> {
    const { Item } = await doc.send(
      new GetCommand({ TableName: table, Key: { pk: deadLetterPartition(job), sk }, ConsistentRead: true }),
    );
    if (!Item) throw new Error(`job ${job} has no dead-lettered operation ${sk}`);
    return Item;
  }

  /**
   * Puts a dead-lettered operation back on top of the stack with its attempts reset. The new key
   * is recorded on the dead letter first, so running requeue again after a failure reuses it.
   */
  async function requeue(job: string, sk: string): Promise<{ sk: string }> {
    const dead = await deadLetter(job, sk);
    let target = typeof dead.requeuedAs === 'string' ? dead.requeuedAs : undefined;
    if (!target) {
      target = operationKey(await new StackStore(doc, table, job).nextSequence(), 0);
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: deadLetterPartition(job), sk },
          UpdateExpression: 'SET requeuedAs = :target',
          ConditionExpression: 'attribute_not_exists(requeuedAs)',
          ExpressionAttributeValues: { ':target': target },
        }),
      );
    }
    await conditionally(
      doc.send(
        new PutCommand({
          TableName: table,
          Item: {
            pk: stackPartition(job),
            sk: target,
            kind: dead.kind,
            payload: dead.payload,
            attempts: 0,
            requeuedFrom: sk,
          },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    await drop(job, sk);
    return { sk: target };
  }

  /** Deletes a dead letter for good. */
  async function drop(job: string, sk: string): Promise<void> {
    await deadLetter(job, sk);
    await doc.send(new DeleteCommand({ TableName: table, Key: { pk: deadLetterPartition(job), sk } }));
  }

  return { stack, deadLetters, requeue, drop };
}

export type CleanupOperator = ReturnType<typeof createCleanupOperator>;
