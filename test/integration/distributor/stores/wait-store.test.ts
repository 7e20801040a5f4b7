import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoWaitStore, STORED_WAITS_PER_TARGET } from '../../../../lib/distributor/stores/wait-store';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';

describe('DynamoWaitStore (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let store: DynamoWaitStore;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    store = new DynamoWaitStore(dynamo.doc, 'DistributorStateTable');
  });
  afterAll(() => dynamo?.stop());

  const wait = (queue: string, maxMs: number) => ({ queue, maxMs, p50Ms: maxMs / 2, measured: 2 });

  it("each target's last pass replaces its waits; every target is read back, beside the table's other items", async () => {
    await dynamo.doc.send(
      new PutCommand({ TableName: 'DistributorStateTable', Item: { pk: 'rotation#w', cursor: 'w»/a', version: 1 } }),
    );
    await store.record({ target: 'w', at: 1, queues: [wait('w»/a', 900), wait('w»/b', 100)] });
    await store.record({ target: 'v', at: 2, queues: [wait('v»/a', 50)] });
    await store.record({ target: 'w', at: 3, queues: [wait('w»/b', 70)] });
    expect(await store.readAll()).toEqual([
      { target: 'v', at: 2, queues: [wait('v»/a', 50)] },
      { target: 'w', at: 3, queues: [wait('w»/b', 70)] },
    ]);
  });

  it('keeps at most STORED_WAITS_PER_TARGET queues, the first ones given (the longest)', async () => {
    const queues = Array.from({ length: STORED_WAITS_PER_TARGET + 5 }, (_, i) => wait(`many»/t${i}`, 1000 - i));
    await store.record({ target: 'many', at: 1, queues });
    const read = (await store.readAll()).find((t) => t.target === 'many')!;
    expect(read.queues).toEqual(queues.slice(0, STORED_WAITS_PER_TARGET));
  });

  it('a malformed item is left out, the others are read', async () => {
    await dynamo.doc.send(
      new PutCommand({ TableName: 'DistributorStateTable', Item: { pk: 'staging-waits#bad', queues: 'none' } }),
    );
    expect((await store.readAll()).map((t) => t.target)).not.toContain('bad');
    expect((await store.readAll()).map((t) => t.target)).toContain('v');
  });
});
