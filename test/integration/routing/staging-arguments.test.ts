import { type Channel, type ChannelModel, connect } from 'amqplib';
import { createRouterService } from '../../../lib/routing/service';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/**
 * Issue 12, item 4: a staging queue takes only the target arguments that cannot drop, refuse or
 * dead-letter a waiting message. A target's `x-message-ttl` copied to staging expired messages
 * before any distributor pass could move them.
 */
describe('router: staging queues copy an allow-list of their target arguments (real RabbitMQ)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let connection: ChannelModel;
  let channel: Channel;
  let service: ReturnType<typeof createRouterService>;

  const lossy = {
    'x-message-ttl': 300,
    'x-dead-letter-exchange': 'amq.fanout',
    'x-dead-letter-routing-key': 'dead',
    'x-max-length': 1,
    'x-overflow': 'reject-publish',
    'x-expires': 60_000,
    'x-single-active-consumer': true,
  };

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    connection = await connect(rabbit.amqpUrl);
    channel = await connection.createChannel();
    await channel.assertQueue('ttl-target', {
      durable: true,
      arguments: { ...lossy, 'x-max-priority': 10, 'x-queue-mode': 'lazy' },
    });
    service = createRouterService(
      routerConfig(rabbit, dynamo, {
        ROUTER_TARGETS: JSON.stringify({
          configured: { durable: true, arguments: { 'x-message-ttl': 300, 'x-max-priority': 9 } },
        }),
        // The allow-list with the priority in it; without `copy` it is left out (staging-priorities.test.ts).
        ROUTER_STAGING_PRIORITIES: 'copy',
      }),
      recordingReport().report,
    );
  });
  afterAll(async () => {
    await service?.close();
    await connection?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });

  const argumentsOf = async (queue: string) =>
    (
      await rabbit.api<{ arguments: Record<string, unknown> }>(
        'GET',
        `/api/queues/${encodeURIComponent(rabbit.vhost)}/${encodeURIComponent(queue)}`,
      )
    ).arguments;

  it('keeps priority, drops TTL, dead-lettering, limits, expiry and queue mode; waiting messages stay', async () => {
    const result = await service.route(
      sqsEvent([sqsRecord(event('ttl-target', 't1', 'one')), sqsRecord(event('ttl-target', 't1', 'two'))]),
    );
    expect(result).toEqual({ batchItemFailures: [] });

    // Longer than the target's TTL: both messages still wait in staging.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const { messageCount } = await channel.checkQueue('ttl-target»/t1');
    expect(messageCount).toBe(2);
    expect(await argumentsOf('ttl-target»/t1')).toEqual({
      'x-max-priority': 10,
      'x-queue-type': 'classic',
      'x-overflow': 'reject-publish',
    });
  });

  // Issue 26 (RabbitMQ 4 gaps): a classic target declared before 4.x lists no x-queue-type. Its
  // staging queue, declared without one, would take the vhost's default type, quorum on Amazon
  // MQ's 4.x brokers, which refuses the copied x-max-priority. 3.10 has no default queue type, so
  // the test checks what the declare says: the type the management API gives for the target.
  it("declares a typeless classic target's staging queues classic, by name", async () => {
    await channel.assertQueue('typeless-target', { durable: true, arguments: { 'x-max-priority': 10 } });
    expect(await argumentsOf('typeless-target')).toEqual({ 'x-max-priority': 10 });
    expect(await service.route(sqsEvent([sqsRecord(event('typeless-target', 't1', 'x'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf('typeless-target»/t1')).toMatchObject({ 'x-queue-type': 'classic', 'x-max-priority': 10 });
  });

  it('filters arguments given in ROUTER_TARGETS the same way', async () => {
    expect(await service.route(sqsEvent([sqsRecord(event('configured', 't1', 'x'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf('configured»/t1')).toEqual({ 'x-max-priority': 9, 'x-overflow': 'reject-publish' });
  });
});
