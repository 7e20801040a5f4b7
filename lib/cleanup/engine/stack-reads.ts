import { FILL_PREFIX, OPERATION_PREFIX } from './keys';
import type { StackItems } from './stack-items';
import { candidateSchema, type StackRecord, stackRecordSchema } from './stack-record';

/** What a step and the operator read of a job's stack: its top, all of it, its latest fill, one item. */
export class StackReads {
  constructor(private readonly items: StackItems) {}

  /** A page of operations, newest first: their keys, parents and leases, not their payloads. */
  async topOperations(limit: number, startKey?: Record<string, unknown>) {
    const { items } = this;
    const page = await items.query(items.pk, OPERATION_PREFIX, {
      ProjectionExpression: 'sk, parent, leaseUntil',
      ConsistentRead: true,
      Limit: limit,
      ExclusiveStartKey: startKey,
    });
    return { items: page.items.map((item) => items.parse(candidateSchema, item)), next: page.next };
  }

  /** Every operation of the stack, newest first, with its kind and lease (one read per ~1 MB). */
  async allOperations(): Promise<StackRecord[]> {
    const { items } = this;
    const all = await items.queryAll(items.pk, OPERATION_PREFIX, 'sk, kind, leaseUntil');
    return all.map((item) => items.parse(stackRecordSchema, item));
  }

  /** The most recent fill of the stack, if it was ever filled. */
  async latestFill(): Promise<StackRecord | undefined> {
    const { items } = this;
    const page = await items.query(items.pk, FILL_PREFIX, { ConsistentRead: true, Limit: 1 });
    const [item] = page.items;
    return item && items.parse(stackRecordSchema, item);
  }

  get(sk: string): Promise<StackRecord | undefined> {
    return this.items.get(this.items.pk, sk, stackRecordSchema);
  }
}
