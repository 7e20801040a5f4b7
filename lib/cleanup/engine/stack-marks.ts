import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { markKey } from './keys';
import { conditionally, type StackItems } from './stack-items';
import { markSchema } from './stack-record';

/** The times a job keeps beside its stack (`mark#<name>`), moved only forward. */
export class StackMarks {
  constructor(private readonly items: StackItems) {}

  /** The time recorded under mark `name` (epoch ms), if any. */
  async get(name: string): Promise<number | undefined> {
    const mark = await this.items.get(this.items.pk, markKey(name), markSchema);
    return mark?.at;
  }

  /**
   * Records `at` (epoch ms) under mark `name` unless a later time is there: of concurrent or late
   * writers (a pass that finished after a newer one) the latest time stands, whatever their order.
   */
  async advance(name: string, at: number): Promise<void> {
    const { items } = this;
    await conditionally(
      items.doc.send(
        new UpdateCommand({
          TableName: items.table,
          Key: { pk: items.pk, sk: markKey(name) },
          UpdateExpression: 'SET #at = :at, #time = :time',
          ConditionExpression: 'attribute_not_exists(#at) OR #at < :at',
          ExpressionAttributeNames: { '#at': 'at', '#time': 'time' },
          ExpressionAttributeValues: { ':at': at, ':time': new Date(at).toISOString() },
        }),
      ),
    );
  }
}
