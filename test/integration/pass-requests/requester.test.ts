import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoLeaseStore } from '../../../lib/pass-requests/lease-store';
import { MAX_PASS_DELAY_MS, type PassRequestEvent } from '../../../lib/pass-requests/pass-trigger';
import { passRequester } from '../../../lib/pass-requests/requester';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

describe('passRequester (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
  });
  afterAll(() => dynamo?.stop());

  it('asks for at most MAX_PASS_DELAY_MS, so a pending mark never blocks the target for longer than that and the grace', async () => {
    const started: PassRequestEvent[] = [];
    const requestPass = passRequester({
      leases: new DynamoLeaseStore(dynamo.doc, 'DistributorStateTable'),
      trigger: { start: async (event) => void started.push(event) },
      graceMs: 1_000,
      now: () => 5_000,
    });
    expect(await requestPass('worker-in', 3_600_000)).toBe('start');
    expect(started.map((event) => event.delayMs)).toEqual([MAX_PASS_DELAY_MS]);
    const { Item } = await dynamo.doc.send(
      new GetCommand({ TableName: 'DistributorStateTable', Key: { pk: 'lease#worker-in' } }),
    );
    expect(Item?.dueBy).toBe(5_000 + MAX_PASS_DELAY_MS + 1_000);
  });
});
