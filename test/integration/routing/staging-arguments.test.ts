import { type Channel, type ChannelModel, connect } from 'amqplib';
import { createRouterService } from '../../../lib/wiring/router';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';
import { onRabbitmq4 } from '../../harness/services';

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
  let recorded: ReturnType<typeof recordingReport>;

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
    recorded = recordingReport();
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
          refused: { durable: true, arguments: { 'x-queue-version': 3 } },
          'kept-quorum': { durable: true, arguments: { 'x-queue-type': 'quorum' } },
        }),
        // The allow-list with the priority in it; without `copy` it is left out (staging-priorities.test.ts).
        ROUTER_STAGING_PRIORITIES: 'copy',
      }),
      recorded.report,
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

  // Issue 36, item 5: a quorum staging queue cannot be reaped (RabbitMQ refuses a conditional delete
  // of a quorum queue) and costs the broker 3.5 times a classic one: a quorum target's are classic.
  it("declares a quorum target's staging queues classic", async () => {
    await channel.assertQueue('quorum-target', {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-quorum-initial-group-size': 1, 'x-delivery-limit': 5 },
    });
    expect(await service.route(sqsEvent([sqsRecord(event('quorum-target', 't1', 'x'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf('quorum-target»/t1')).toEqual({
      'x-queue-type': 'classic',
      'x-overflow': 'reject-publish',
    });
  });

  it('filters arguments given in ROUTER_TARGETS the same way', async () => {
    expect(await service.route(sqsEvent([sqsRecord(event('configured', 't1', 'x'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf('configured»/t1')).toEqual({
      'x-queue-type': 'classic',
      'x-max-priority': 9,
      'x-overflow': 'reject-publish',
    });
  });

  it('keeps a quorum type given in ROUTER_TARGETS (the setting that keeps quorum staging queues)', async () => {
    expect(await service.route(sqsEvent([sqsRecord(event('kept-quorum', 't1', 'x'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await argumentsOf('kept-quorum»/t1')).toEqual({ 'x-queue-type': 'quorum', 'x-overflow': 'reject-publish' });
  });

  // Issue 38, item 7: a declare refused for an invalid argument was reported as a queue that
  // "exists with arguments unlike its target", and the broker's reason was lost.
  it("fails a declare refused for an invalid argument with the broker's reason, not as a kept queue", async () => {
    const record = sqsRecord(event('refused', 't1', 'x'));
    const good = sqsRecord(event('configured', 't2', 'y'));
    expect(await service.route(sqsEvent([record, good]))).toEqual({
      batchItemFailures: [{ itemIdentifier: record.messageId }],
    });
    expect(recorded.kept).toEqual([]);
    expect(recorded.failures).toEqual([
      expect.objectContaining({ messageId: record.messageId, kind: 'BrokerFailures' }),
    ]);
    expect(recorded.failures[0]!.reason).toMatch(/406.*invalid arg 'x-queue-version'.*unsupported queue version/);
  });

  // On RabbitMQ 4 a declare without x-queue-type takes the vhost's default type (3.10 keeps the
  // setting but declares classic): on both, a staging queue is classic.
  it('declares staging queues classic on a vhost whose default type is quorum', async () => {
    await rabbit.api('PUT', `/api/vhosts/${encodeURIComponent(rabbit.vhost)}`, { default_queue_type: 'quorum' });
    await channel.assertQueue('defaulted-target', { durable: true });
    const typeOf = async (queue: string) =>
      (
        await rabbit.api<{ type: string }>(
          'GET',
          `/api/queues/${encodeURIComponent(rabbit.vhost)}/${encodeURIComponent(queue)}`,
        )
      ).type;
    expect(await typeOf('defaulted-target')).toBe(onRabbitmq4 ? 'quorum' : 'classic');
    expect(await service.route(sqsEvent([sqsRecord(event('defaulted-target', 't1', 'x'))]))).toEqual({
      batchItemFailures: [],
    });
    expect(await typeOf('defaulted-target»/t1')).toBe('classic');
  });
});
