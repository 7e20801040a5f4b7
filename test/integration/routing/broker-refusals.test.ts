import { readFileSync } from 'node:fs';
import { type Channel, type ChannelModel, connect, type GetMessage } from 'amqplib';
import type { SQSRecord } from 'aws-lambda';
import type { AfterProcessEvent } from '../../../lib/routing/event';
import { createRouterService } from '../../../lib/routing/service';
import { fixturePath } from '../../fixtures';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/**
 * Issue 23, item 2: a property RabbitMQ refuses at basic.publish closes the channel, which failed
 * (or, once retried, duplicated) every record published beside it: an `expiration` of 2^63 sent
 * 57–58 of 99 healthy batch-mates to the dead-letter queue. Each such event must fail alone, as a
 * bad event naming its field, before anything is published; its batch-mates arrive exactly once.
 */
describe('router: properties the broker refuses fail alone (real RabbitMQ, dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let connection: ChannelModel;
  let channel: Channel;
  let service: ReturnType<typeof createRouterService>;
  let recorded: ReturnType<typeof recordingReport>;

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    connection = await connect(rabbit.amqpUrl);
    channel = await connection.createChannel();
    await channel.assertQueue('worker-in', { durable: true, arguments: { 'x-max-priority': 10 } });
    await channel.assertQueue('another-tenants-queue', { durable: true });
    recorded = recordingReport();
    service = createRouterService(routerConfig(rabbit, dynamo), recorded.report);
  });
  afterAll(async () => {
    await service?.close();
    await connection?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });
  let tests = 0;
  let tenant = '';
  beforeEach(() => {
    recorded.failures.length = 0;
    tenant = `refusals${++tests}`;
  });

  async function drain(queue: string): Promise<string[]> {
    const messages: GetMessage[] = [];
    for (let got = await channel.get(queue, { noAck: true }); got; got = await channel.get(queue, { noAck: true }))
      messages.push(got);
    return messages.map((m) => m.content.toString());
  }

  const withProperties = (body: string, properties: Record<string, unknown>): AfterProcessEvent =>
    ({ target: 'worker-in', tenantId: tenant, message: { body, properties } }) as AfterProcessEvent;

  /** `healthy` good records with `bad` in their middle: only `bad` fails, naming `field`; each good one arrives once. */
  async function failsAlone(bad: SQSRecord, field: string, healthy = 6) {
    const good = Array.from({ length: healthy }, (_, i) => sqsRecord(event('worker-in', tenant, `healthy-${i}`)));
    const batch = [...good.slice(0, healthy / 2), bad, ...good.slice(healthy / 2)];
    const result = await service.route(sqsEvent(batch));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
    expect(recorded.failures).toEqual([
      expect.objectContaining({ messageId: bad.messageId, kind: 'Rejected', fields: [field] }),
    ]);
    expect((await drain(`worker-in»/${tenant}`)).sort()).toEqual(good.map((_, i) => `healthy-${i}`).sort());
  }

  it('99 healthy events and one with an expiration of 2^63: the one fails, the 99 arrive once each', async () => {
    await failsAlone(
      sqsRecord(withProperties('poison', { expiration: '9223372036854775808' })),
      'message.properties.expiration',
      99,
    );
    expect(recorded.failures[0]!.reason).toMatch(/at most 315360000000/);
  });

  it.each([
    ['just over ten years', '315360000001'],
    ['2^53', '9007199254740992'],
  ])('an expiration the broker refuses (%s)', async (_, expiration) => {
    await failsAlone(sqsRecord(withProperties('poison', { expiration })), 'message.properties.expiration');
  });

  it('an expiration of exactly ten years is routed', async () => {
    const longest = sqsRecord(withProperties('ten-years', { expiration: '315360000000' }));
    expect(await service.route(sqsEvent([longest]))).toEqual({ batchItemFailures: [] });
    expect(await drain(`worker-in»/${tenant}`)).toEqual(['ten-years']);
  });

  it('a replyTo of the direct reply-to pseudo-queue (the broker refuses it without a reply consumer)', async () => {
    await failsAlone(
      sqsRecord(withProperties('poison', { replyTo: 'amq.rabbitmq.reply-to' })),
      'message.properties.replyTo',
    );
  });

  it.each(['CC', 'BCC'])('a %s header that is not an array (the broker refuses it)', async (header) => {
    await failsAlone(
      sqsRecord(withProperties('poison', { headers: { [header]: 'another-tenants-queue' } })),
      `message.properties.headers.${header}`,
    );
  });

  it.each(['CC', 'BCC'])(
    'a %s header naming other queues (the broker would copy the message there)',
    async (header) => {
      await failsAlone(
        sqsRecord(withProperties('copied', { headers: { [header]: ['another-tenants-queue'] } })),
        `message.properties.headers.${header}`,
      );
      expect(await drain('another-tenants-queue')).toEqual([]);
    },
  );

  it('a task message with a CC message attribute', async () => {
    const body = readFileSync(fixturePath('taskmessage-document-tenant-workflow.json'), 'utf8');
    const bad = sqsRecord(body, {
      CC: { dataType: 'String', stringValue: 'another-tenants-queue', stringListValues: [], binaryListValues: [] },
    });
    const result = await service.route(sqsEvent([bad]));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
    expect(recorded.failures).toEqual([
      expect.objectContaining({ kind: 'Rejected', fields: ['messageAttributes.CC'] }),
    ]);
    expect(await drain('another-tenants-queue')).toEqual([]);
  });

  it('a lower-case cc header is an ordinary header, routed', async () => {
    const ordinary = sqsRecord(withProperties('cc', { headers: { cc: 'someone' } }));
    expect(await service.route(sqsEvent([ordinary]))).toEqual({ batchItemFailures: [] });
    expect(await drain(`worker-in»/${tenant}`)).toEqual(['cc']);
  });
});

/**
 * Issue 23, item 10 (first part): SQS knows a message by its id. A healthy record sharing its
 * messageId with a bad one was reported failed after it was routed, and routed again on every retry.
 */
describe('router: records sharing an SQS messageId (real RabbitMQ, dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let service: ReturnType<typeof createRouterService>;
  let recorded: ReturnType<typeof recordingReport>;

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    const connection = await connect(rabbit.amqpUrl);
    await (await connection.createChannel()).assertQueue('worker-in', { durable: true });
    await connection.close();
    recorded = recordingReport();
    service = createRouterService(routerConfig(rabbit, dynamo), recorded.report);
  });
  afterAll(async () => {
    await service?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });

  it('a routed record is not reported failed for a bad record with the same messageId; the bad one is logged', async () => {
    const healthy = sqsRecord(event('worker-in', 'shared', 'healthy'));
    const bad = { ...sqsRecord('not json'), messageId: healthy.messageId };
    const other = sqsRecord('not json either');
    for (const batch of [
      [healthy, bad, other],
      [bad, healthy, other],
    ]) {
      recorded.failures.length = 0;
      const result = await service.route(sqsEvent(batch));
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: other.messageId }]);
      expect(recorded.failures.map((f) => f.messageId).sort()).toEqual([healthy.messageId, other.messageId].sort());
    }
  });

  it('two failed records of one messageId are one batch item failure', async () => {
    const first = sqsRecord('not json');
    const second = { ...sqsRecord('nor this'), messageId: first.messageId };
    expect(await service.route(sqsEvent([first, second]))).toEqual({
      batchItemFailures: [{ itemIdentifier: first.messageId }],
    });
  });
});
