import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { FairwayError } from '../../platform/errors';
import type { PlacedOperation, PushPlan } from './codec';
import { SEQUENCE_KEY } from './keys';
import type { StackItems } from './stack-items';
import { sequenceSchema } from './stack-record';

const BATCH_WRITE_TRIES = 10;

/**
 * How a step puts its children on the stack: a push sequence drawn from the job's counter, the plan
 * recorded on the parent before any child is written, then the children in batch puts. The batch
 * put is the one write that is not conditional, which is safe because nobody claims a child while
 * its parent is still on the stack.
 */
export class StackPushes {
  constructor(
    private readonly items: StackItems,
    private readonly batchSize = 25,
  ) {}

  /** The next push sequence of this job (atomic counter). */
  async nextSequence(): Promise<number> {
    const { items } = this;
    const { Attributes } = await items.doc.send(
      new UpdateCommand({
        TableName: items.table,
        Key: { pk: items.pk, sk: SEQUENCE_KEY },
        UpdateExpression: 'ADD #value :one',
        ExpressionAttributeNames: { '#value': 'value' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return items.parse(sequenceSchema, { sk: SEQUENCE_KEY, ...Attributes }).value;
  }

  /** Records where the children go, before any is written, so that a retry writes the same keys. */
  recordPlan(sk: string, owner: string, plan: PushPlan): Promise<boolean> {
    return this.items.updateOwned(sk, owner, 'SET pushSequence = :sequence, shuffleSeed = :seed', {
      ':sequence': plan.sequence,
      ':seed': plan.shuffleSeed,
    });
  }

  /** Writes the children in batches; a retried step writes the same keys again, overwriting, never duplicating. */
  async push(children: readonly PlacedOperation[], pushedAt: number): Promise<void> {
    const { items } = this;
    const at = new Date(pushedAt).toISOString();
    for (let start = 0; start < children.length; start += this.batchSize) {
      let requests = children.slice(start, start + this.batchSize).map((child) => ({
        PutRequest: { Item: { pk: items.pk, ...child, attempts: 0, pushedAt: at } },
      }));
      for (let tries = 1; requests.length > 0; tries++) {
        if (tries > BATCH_WRITE_TRIES) {
          throw new FairwayError(
            `DynamoDB left ${requests.length} children of job ${items.job} unprocessed after ${BATCH_WRITE_TRIES} tries`,
          );
        }
        if (tries > 1) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** tries));
        const { UnprocessedItems } = await items.doc.send(
          new BatchWriteCommand({ RequestItems: { [items.table]: requests } }),
        );
        requests = (UnprocessedItems?.[items.table] ?? []) as typeof requests;
      }
    }
  }
}
