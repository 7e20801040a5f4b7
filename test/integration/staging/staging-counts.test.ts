import { DynamoStagingRegistry } from '../../../lib/staging/staging-registry';
import { stagingCounts, stagingTableOf } from '../../../local/cli/staging-counts';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

/** Issue 24, item 4: `npm start` and `npx fairway queues` show how many staging queues exist and how many were reaped. */
describe('stagingCounts (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
  });
  afterAll(() => dynamo?.stop());

  it('counts the listed staging queues per target and the reaped totals, targets without queues included', async () => {
    const registry = new DynamoStagingRegistry(dynamo.doc, 'StagingQueuesTable');
    await registry.countReaped('scan', 3);
    await registry.countReaped('gone', 2);
    await registry.touch('scan', 'scan»/a', 1); // a record is not a queue: the listing counts them
    const listing = [{ name: 'scan' }, { name: 'scan»/a' }, { name: 'scan»/b/ocr' }, { name: 'mail»/x' }];
    expect(await stagingCounts(listing, registry)).toEqual({
      stagingQueues: 3,
      reaped: 5,
      byTarget: [
        { target: 'gone', stagingQueues: 0, reaped: 2 },
        { target: 'mail', stagingQueues: 1, reaped: 0 },
        { target: 'scan', stagingQueues: 2, reaped: 3 },
      ],
    });
    expect(await stagingCounts(listing)).toMatchObject({ stagingQueues: 3, reaped: 0 });
  });

  it('reads the table from the environment as the functions do', () => {
    expect(stagingTableOf({ STAGING_TABLE: 'staging' })).toBe('staging');
    expect(stagingTableOf({ STAGING_TABLE: '' })).toBeUndefined();
  });
});
