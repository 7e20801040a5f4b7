import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { FairwayError } from '../../../lib/platform/errors';
import { DynamoStagingRegistry, REAPING_MARK_STALE_MS } from '../../../lib/staging/staging-registry';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

const TABLE = 'StagingQueuesTable';
const HOUR = 3_600_000;

describe('DynamoStagingRegistry (dynalite, the deployed key schema)', () => {
  let dynamo: EmbeddedDynamo;
  let registry: DynamoStagingRegistry;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    registry = new DynamoStagingRegistry(dynamo.doc, TABLE);
  });
  afterAll(() => dynamo?.stop());

  it('records touches per target, lists them in name order, and keeps the reaped totals apart', async () => {
    expect(await registry.touch('a', 'a»/t2', 5)).toBe('recorded');
    expect(await registry.touch('a', 'a»/t1', 6)).toBe('recorded');
    expect(await registry.touch('b', 'b»/t1', 7)).toBe('recorded');
    expect(await registry.touch('a', 'a»/t2', 8)).toBe('recorded');
    await registry.countReaped('a', 2);
    await registry.countReaped('a', 1);
    expect(await registry.queuesOf('a')).toEqual([
      { target: 'a', queue: 'a»/t1', touchedAt: 6 },
      { target: 'a', queue: 'a»/t2', touchedAt: 8 },
    ]);
    expect(await registry.reapedCounts()).toEqual({ a: 3 });
    expect(await registry.queuesOf('nothing')).toEqual([]);
  });

  it('marks only a record untouched since the given time, and a touch then finds it being reaped', async () => {
    const now = 10 * HOUR;
    await registry.touch('m', 'm»/old', now - 2 * HOUR);
    await registry.touch('m', 'm»/recent', now - 1000);
    expect(await registry.markReaping('m', 'm»/recent', now - HOUR, now)).toBe(false);
    expect(await registry.markReaping('m', 'm»/missing', now - HOUR, now)).toBe(false);
    expect(await registry.markReaping('m', 'm»/old', now - HOUR, now)).toBe(true);
    // A second reaper cannot take a fresh mark.
    expect(await registry.markReaping('m', 'm»/old', now - HOUR, now + 1)).toBe(false);
    expect(await registry.touch('m', 'm»/old', now + 10)).toBe('reaping');
    expect((await registry.queuesOf('m')).find((r) => r.queue === 'm»/old')).toEqual({
      target: 'm',
      queue: 'm»/old',
      touchedAt: now - 2 * HOUR,
      reapingAt: now,
    });
    expect(await registry.queuesOf('m')).toHaveLength(2); // the failed mark created no record
  });

  it('a touch overwrites a stale mark (its reaper died), and the old reaper then removes nothing', async () => {
    const now = 20 * HOUR;
    await registry.touch('s', 's»/q', now - 2 * HOUR);
    expect(await registry.markReaping('s', 's»/q', now - HOUR, now)).toBe(true);
    expect(await registry.touch('s', 's»/q', now + REAPING_MARK_STALE_MS)).toBe('reaping');
    expect(await registry.touch('s', 's»/q', now + REAPING_MARK_STALE_MS + 1)).toBe('recorded');
    await registry.removeReaped('s', 's»/q', now);
    await registry.clearMark('s', 's»/q', now);
    expect(await registry.queuesOf('s')).toEqual([
      { target: 's', queue: 's»/q', touchedAt: now + REAPING_MARK_STALE_MS + 1 },
    ]);
  });

  it('removes a record only under its own mark, and a cleared mark lets routers touch again', async () => {
    const now = 30 * HOUR;
    await registry.touch('r', 'r»/gone', now - 2 * HOUR);
    await registry.touch('r', 'r»/kept', now - 2 * HOUR);
    expect(await registry.markReaping('r', 'r»/gone', now - HOUR, now)).toBe(true);
    expect(await registry.markReaping('r', 'r»/kept', now - HOUR, now)).toBe(true);
    await registry.removeReaped('r', 'r»/gone', now - 1); // another mark: not removed
    expect(await registry.queuesOf('r')).toHaveLength(2);
    await registry.removeReaped('r', 'r»/gone', now);
    await registry.clearMark('r', 'r»/kept', now);
    expect(await registry.queuesOf('r')).toEqual([{ target: 'r', queue: 'r»/kept', touchedAt: now - 2 * HOUR }]);
    expect(await registry.touch('r', 'r»/kept', now + 1)).toBe('recorded');
  });

  it('adopts a listed queue only when it has no record', async () => {
    expect(await registry.adopt('d', 'd»/x', 100)).toBe(true);
    expect(await registry.adopt('d', 'd»/x', 200)).toBe(false);
    expect(await registry.queuesOf('d')).toEqual([{ target: 'd', queue: 'd»/x', touchedAt: 100 }]);
  });

  it('a malformed record is an error naming the table, item and field', async () => {
    await dynamo.doc.send(new PutCommand({ TableName: TABLE, Item: { pk: 'bad', sk: 'bad»/q', touchedAt: 'soon' } }));
    const read = registry.queuesOf('bad');
    await expect(read).rejects.toThrow(FairwayError);
    await expect(registry.queuesOf('bad')).rejects.toThrow(
      /StagingQueuesTable item "bad»\/q" of bad is malformed: touchedAt/,
    );
  });
});
