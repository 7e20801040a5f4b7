import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deadLetterPartition, operationKey } from './keys';
import type { StackClaims } from './stack-claims';
import { conditionally, type StackItems, truncate } from './stack-items';
import type { StackPushes } from './stack-pushes';
import { type DeadLetterRecord, deadLetterSchema, type StackRecord } from './stack-record';

/** A job's dead-letter partition (`<job>#dead`): operations set aside with their error, and what an operator does with them. */
export class DeadLetters {
  private readonly pk: string;

  constructor(
    private readonly items: StackItems,
    private readonly claims: StackClaims,
    private readonly pushes: StackPushes,
  ) {
    this.pk = deadLetterPartition(items.job);
  }

  /**
   * Sets an item aside in the job's dead-letter partition with its error, then takes it off the
   * stack. The first dead letter of an item is kept if a crash makes this run twice.
   */
  async setAside(item: StackRecord, owner: string, fill: boolean, error: string, now: number): Promise<boolean> {
    const { owner: _owner, leaseUntil: _lease, ...kept } = item;
    await conditionally(
      this.items.doc.send(
        new PutCommand({
          TableName: this.items.table,
          Item: { ...kept, pk: this.pk, error: truncate(error), deadAt: new Date(now).toISOString() },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    return this.claims.finish(item, owner, fill, error);
  }

  /** Every dead letter of the job, newest key first. */
  async list(): Promise<DeadLetterRecord[]> {
    const all = await this.items.queryAll(this.pk, '');
    return all.map((item) => this.items.parse(deadLetterSchema, item));
  }

  get(sk: string): Promise<DeadLetterRecord | undefined> {
    return this.items.get(this.pk, sk, deadLetterSchema);
  }

  /**
   * Puts a dead letter back on top of the stack with its attempts reset. The new key is recorded on
   * the dead letter first, so a requeue run again after a failure reuses it; then the dead letter goes.
   */
  async requeue(dead: DeadLetterRecord): Promise<string> {
    const { items } = this;
    let target = dead.requeuedAs;
    if (!target) {
      target = operationKey(await this.pushes.nextSequence(), 0);
      await items.doc.send(
        new UpdateCommand({
          TableName: items.table,
          Key: { pk: this.pk, sk: dead.sk },
          UpdateExpression: 'SET requeuedAs = :target',
          ConditionExpression: 'attribute_not_exists(requeuedAs)',
          ExpressionAttributeValues: { ':target': target },
        }),
      );
    }
    await conditionally(
      items.doc.send(
        new PutCommand({
          TableName: items.table,
          Item: {
            pk: items.pk,
            sk: target,
            kind: dead.kind,
            payload: dead.payload,
            attempts: 0,
            requeuedFrom: dead.sk,
          },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      ),
    );
    await this.delete(dead.sk);
    return target;
  }

  async delete(sk: string): Promise<void> {
    await this.items.doc.send(new DeleteCommand({ TableName: this.items.table, Key: { pk: this.pk, sk } }));
  }
}
