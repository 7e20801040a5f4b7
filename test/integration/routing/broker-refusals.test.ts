import { readFileSync } from 'node:fs';
import type { SQSRecord } from 'aws-lambda';
import type { AfterProcessEvent } from '../../../lib/routing/event';
import { fixturePath } from '../../fixtures';
import { event, type RouterTestBed, sqsEvent, sqsRecord, startRouterTestBed } from '../../harness/routing-events';

/**
 * Issue 23, item 2: a property RabbitMQ refuses at basic.publish closes the channel, which failed
 * (or, once retried, duplicated) every record published beside it: an `expiration` of 2^63 sent
 * 57–58 of 99 healthy batch-mates to the dead-letter queue. Each such event must fail alone, as a
 * bad event naming its field, before anything is published; its batch-mates arrive exactly once.
 */
describe('router: properties the broker refuses fail alone (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;

  beforeAll(async () => {
    bed = await startRouterTestBed({
      queues: {
        'worker-in': { durable: true, arguments: { 'x-max-priority': 10 } },
        'another-tenants-queue': { durable: true },
      },
    });
  });
  afterAll(() => bed?.close());
  let tests = 0;
  let tenant = '';
  beforeEach(() => {
    bed.recorded.failures.length = 0;
    tenant = `refusals${++tests}`;
  });

  const drain = async (queue: string) => (await bed.drain(queue)).map((m) => m.content.toString());

  const withProperties = (body: string, properties: Record<string, unknown>): AfterProcessEvent =>
    ({ target: 'worker-in', tenantId: tenant, message: { body, properties } }) as AfterProcessEvent;

  /** `healthy` good records with `bad` in their middle: only `bad` fails, naming `field`; each good one arrives once. */
  async function failsAlone(bad: SQSRecord, field: string, healthy = 6) {
    const good = Array.from({ length: healthy }, (_, i) => sqsRecord(event('worker-in', tenant, `healthy-${i}`)));
    const batch = [...good.slice(0, healthy / 2), bad, ...good.slice(healthy / 2)];
    const result = await bed.service.route(sqsEvent(batch));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
    expect(bed.recorded.failures).toEqual([
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
    expect(bed.recorded.failures[0]!.reason).toMatch(/at most 315360000000/);
  });

  it.each([
    ['just over ten years', '315360000001'],
    ['2^53', '9007199254740992'],
  ])('an expiration the broker refuses (%s)', async (_, expiration) => {
    await failsAlone(sqsRecord(withProperties('poison', { expiration })), 'message.properties.expiration');
  });

  it('an expiration of exactly ten years is routed', async () => {
    const longest = sqsRecord(withProperties('ten-years', { expiration: '315360000000' }));
    expect(await bed.service.route(sqsEvent([longest]))).toEqual({ batchItemFailures: [] });
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
    const result = await bed.service.route(sqsEvent([bad]));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
    expect(bed.recorded.failures).toEqual([
      expect.objectContaining({ kind: 'Rejected', fields: ['messageAttributes.CC'] }),
    ]);
    expect(await drain('another-tenants-queue')).toEqual([]);
  });

  it('a lower-case cc header is an ordinary header, routed', async () => {
    const ordinary = sqsRecord(withProperties('cc', { headers: { cc: 'someone' } }));
    expect(await bed.service.route(sqsEvent([ordinary]))).toEqual({ batchItemFailures: [] });
    expect(await drain(`worker-in»/${tenant}`)).toEqual(['cc']);
  });
});

/**
 * Issue 23, item 10 (first part): SQS knows a message by its id. A healthy record sharing its
 * messageId with a bad one was reported failed after it was routed, and routed again on every retry.
 */
describe('router: records sharing an SQS messageId (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;

  beforeAll(async () => {
    bed = await startRouterTestBed({ queues: { 'worker-in': { durable: true } } });
  });
  afterAll(() => bed?.close());

  it('a routed record is not reported failed for a bad record with the same messageId; the bad one is logged', async () => {
    const healthy = sqsRecord(event('worker-in', 'shared', 'healthy'));
    const bad = { ...sqsRecord('not json'), messageId: healthy.messageId };
    const other = sqsRecord('not json either');
    for (const batch of [
      [healthy, bad, other],
      [bad, healthy, other],
    ]) {
      bed.recorded.failures.length = 0;
      const result = await bed.service.route(sqsEvent(batch));
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: other.messageId }]);
      expect(bed.recorded.failures.map((f) => f.messageId).sort()).toEqual([healthy.messageId, other.messageId].sort());
    }
  });

  it('two failed records of one messageId are one batch item failure', async () => {
    const first = sqsRecord('not json');
    const second = { ...sqsRecord('nor this'), messageId: first.messageId };
    expect(await bed.service.route(sqsEvent([first, second]))).toEqual({
      batchItemFailures: [{ itemIdentifier: first.messageId }],
    });
  });
});
