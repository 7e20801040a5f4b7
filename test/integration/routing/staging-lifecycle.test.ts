import { DynamoStagingRegistry } from '../../../lib/staging/staging-registry';
import { event, type RouterTestBed, sqsEvent, sqsRecord, startRouterTestBed } from '../../harness/routing-events';

/**
 * Issue 24, item 4: the router records the staging queues it uses, holds off a queue the reaper
 * is deleting, and declares again a queue deleted behind its cache instead of failing its records.
 */
describe('router: the staging-queue registry and reaped queues (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;
  let registry: DynamoStagingRegistry;

  beforeAll(async () => {
    bed = await startRouterTestBed({
      queues: { work: { durable: true } },
      env: { STAGING_TABLE: 'StagingQueuesTable' },
    });
    registry = new DynamoStagingRegistry(bed.dynamo.doc, 'StagingQueuesTable');
  });
  afterAll(() => bed?.close());

  it('touches a staging queue when it declares it, not again on the next batches', async () => {
    const before = Date.now();
    for (const body of ['a', 'b', 'c']) {
      expect(await bed.service.route(sqsEvent([sqsRecord(event('work', 'one', body))]))).toEqual({
        batchItemFailures: [],
      });
    }
    const [record] = await registry.queuesOf('work');
    expect(record).toMatchObject({ target: 'work', queue: 'work»/one' });
    expect(record!.touchedAt).toBeGreaterThanOrEqual(before);
    const touchedAt = record!.touchedAt;
    await bed.service.route(sqsEvent([sqsRecord(event('work', 'one', 'd'))]));
    expect((await registry.queuesOf('work'))[0]!.touchedAt).toBe(touchedAt);
    expect(await bed.drain('work»/one')).toHaveLength(4);
  });

  // Before: the publish to the queue deleted behind the cache was returned and its record failed.
  it('declares a queue deleted behind its cache again and routes the returned message, within the batch', async () => {
    await bed.service.route(sqsEvent([sqsRecord(event('work', 'two', 'first'))]));
    await bed.drain('work»/two');
    await bed.channel.deleteQueue('work»/two');
    const result = await bed.service.route(
      sqsEvent([sqsRecord(event('work', 'two', 'second')), sqsRecord(event('work', 'other', 'beside'))]),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    expect(bed.recorded.failures).toEqual([]);
    expect((await bed.drain('work»/two')).map((m) => m.content.toString())).toEqual(['second']);
    expect(await bed.drain('work»/other')).toHaveLength(1);
    // Forgotten, so touched again: the reaper sees it in use.
    expect((await registry.queuesOf('work')).map((r) => r.queue)).toContain('work»/two');
  });

  it('fails the records of a queue the reaper holds, publishing nothing to it; the others are routed', async () => {
    const now = Date.now();
    await registry.touch('work', 'work»/held', now - 3 * 3_600_000);
    expect(await registry.markReaping('work', 'work»/held', now - 3_600_000, now)).toBe(true);
    const held = sqsRecord(event('work', 'held', 'x'));
    const result = await bed.service.route(sqsEvent([held, sqsRecord(event('work', 'free', 'y'))]));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: held.messageId }] });
    expect(bed.recorded.failures).toEqual([
      expect.objectContaining({
        messageId: held.messageId,
        kind: 'BrokerFailures',
        reason: expect.stringContaining('being deleted as unused'),
      }),
    ]);
    const { messageCount } = await bed.channel.checkQueue('work»/held'); // declared beside the touch, left empty
    expect(messageCount).toBe(0);
    expect(await bed.drain('work»/free')).toHaveLength(1);
  });
});
