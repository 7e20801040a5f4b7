import { event, type RouterTestBed, sqsEvent, sqsRecord, startRouterTestBed } from '../../harness/routing-events';

/**
 * Issue 24, item 3: a staging queue that copied its target's x-max-priority cost the broker about
 * 150 KB instead of about 25 KB. Staging queues now have none unless ROUTER_STAGING_PRIORITIES=copy;
 * the priority stays on each message, for the target to order by (bench/lib/broker-memory.ts measures it).
 */
describe('router: staging queues without x-max-priority unless configured (real RabbitMQ)', () => {
  let bed: RouterTestBed;
  let copying: RouterTestBed | undefined;
  const target = { durable: true, arguments: { 'x-max-priority': 10, 'x-queue-type': 'classic' } };

  beforeAll(async () => {
    bed = await startRouterTestBed({ queues: { prio: target } });
  });
  afterAll(async () => {
    await Promise.all([bed?.close(), copying?.close()]);
  });

  const argumentsOf = async (b: RouterTestBed, queue: string) =>
    (
      await b.rabbit.api<{ arguments: Record<string, unknown> }>(
        'GET',
        `/api/queues/${encodeURIComponent(b.rabbit.vhost)}/${encodeURIComponent(queue)}`,
      )
    ).arguments;

  it('declares the staging queue without x-max-priority, and each message keeps its priority', async () => {
    expect(await bed.service.route(sqsEvent([sqsRecord(event('prio', 'quiet', 'a'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf(bed, 'prio»/quiet')).toEqual({
      'x-queue-type': 'classic',
      'x-overflow': 'reject-publish',
    });
    const [message] = await bed.drain('prio»/quiet');
    // A first event of a tenant: level 1, AMQP priority 9 (10 − level), for the target to order by.
    expect(message?.properties.priority).toBe(9);
  });

  it('keeps an existing staging queue declared with x-max-priority as it is, and routes to it', async () => {
    await bed.channel.assertQueue('prio»/old', {
      durable: true,
      arguments: { 'x-max-priority': 10, 'x-queue-type': 'classic', 'x-overflow': 'reject-publish' },
    });
    expect(await bed.service.route(sqsEvent([sqsRecord(event('prio', 'old', 'b'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(bed.recorded.kept).toEqual([{ stagingQueue: 'prio»/old', target: 'prio' }]);
    expect(await argumentsOf(bed, 'prio»/old')).toMatchObject({ 'x-max-priority': 10 });
    expect(await bed.drain('prio»/old')).toHaveLength(1);
  });

  it('copies the target x-max-priority with ROUTER_STAGING_PRIORITIES=copy', async () => {
    copying = await startRouterTestBed({ queues: { prio: target }, env: { ROUTER_STAGING_PRIORITIES: 'copy' } });
    expect(await copying.service.route(sqsEvent([sqsRecord(event('prio', 'quiet', 'c'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf(copying, 'prio»/quiet')).toEqual({
      'x-max-priority': 10,
      'x-queue-type': 'classic',
      'x-overflow': 'reject-publish',
    });
  });
});
