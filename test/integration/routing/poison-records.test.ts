import { readFileSync } from 'node:fs';
import type { SQSRecord } from 'aws-lambda';
import type { AfterProcessEvent } from '../../../lib/routing/event';
import { fixturePath } from '../../fixtures';
import { event, type RouterTestBed, sqsEvent, sqsRecord, startRouterTestBed } from '../../harness/routing-events';

/**
 * Issue 12, items 1 and 2: a record the broker or the AMQP client cannot take fails alone, as a
 * bad event naming its field, before anything of its batch is published; the rest of the batch is
 * routed exactly once.
 */
describe('router: poison records fail alone (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;

  beforeAll(async () => {
    bed = await startRouterTestBed({ queues: { 'worker-in': { durable: true, arguments: { 'x-max-priority': 10 } } } });
  });
  afterAll(() => bed?.close());
  /** Each test its own tenant, so its staging queue holds only what the test published. */
  let tenant = '';
  let tests = 0;
  beforeEach(() => {
    bed.recorded.failures.length = 0;
    tenant = `poison${++tests}`;
  });

  const drain = async (queue: string) => (await bed.drain(queue)).map((m) => m.content.toString());

  const withProperties = (body: string, properties: Record<string, unknown>): AfterProcessEvent =>
    ({
      target: 'worker-in',
      tenantId: tenant,
      message: { body, properties },
    }) as AfterProcessEvent;

  /** A batch of good records around `bad`: only `bad` fails, as Rejected naming `field`; the rest arrive once. */
  async function failsAlone(bad: SQSRecord, field: string) {
    const before = sqsRecord(event('worker-in', tenant, 'before'));
    const after = sqsRecord(event('worker-in', tenant, 'after'));
    const result = await bed.service.route(sqsEvent([before, bad, after]));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
    expect(bed.recorded.failures).toEqual([
      expect.objectContaining({ messageId: bad.messageId, kind: 'Rejected', fields: [field] }),
    ]);
    expect(await drain(`worker-in»/${tenant}`)).toEqual(['before', 'after']);
  }

  describe('item 1: a userId that is not the connection user', () => {
    it('is rejected on its own, naming message.properties.userId', async () => {
      await failsAlone(sqsRecord(withProperties('foreign', { userId: 'someone-else' })), 'message.properties.userId');
      expect(bed.recorded.failures[0]!.reason).toMatch(/RabbitMQ user/);
    });

    it('is routed when it is the connection user', async () => {
      const own = sqsRecord(withProperties('own', { userId: 'guest' }));
      expect(await bed.service.route(sqsEvent([own]))).toEqual({ batchItemFailures: [] });
      expect(await drain(`worker-in»/${tenant}`)).toEqual(['own']);
    });
  });

  describe('item 2: AMQP encoding limits', () => {
    it.each(['messageId', 'correlationId', 'type', 'appId', 'contentType', 'replyTo'])(
      'a %s over 255 bytes',
      async (property) => {
        await failsAlone(
          sqsRecord(withProperties('long', { [property]: 'é'.repeat(128) })),
          `message.properties.${property}`,
        );
        expect(bed.recorded.failures[0]!.reason).toMatch(/256 bytes.*at most 255/);
      },
    );

    it('a header key over 255 bytes, also in a nested table', async () => {
      await failsAlone(
        sqsRecord(withProperties('key', { headers: { ok: { ['k'.repeat(256)]: 1 } } })),
        'message.properties.headers.ok',
      );
      expect(bed.recorded.failures[0]!.reason).toMatch(/key of 256 bytes/);
    });

    it('a header table one byte over the encoding limit', async () => {
      // 4 (table length) + 1 + 1 (key "a") + 1 (tag) + 4 (string length) = 11 bytes around the value.
      await failsAlone(
        sqsRecord(withProperties('big', { headers: { a: 'x'.repeat(65_536 - 10) } })),
        'message.properties.headers',
      );
      expect(bed.recorded.failures[0]!.reason).toMatch(/65537 bytes.*at most 65536/);
    });

    it('a header table exactly at the encoding limit is routed', async () => {
      const fits = sqsRecord(withProperties('fits', { headers: { a: 'x'.repeat(65_536 - 11) } }));
      expect(await bed.service.route(sqsEvent([fits]))).toEqual({ batchItemFailures: [] });
      expect(await drain(`worker-in»/${tenant}`)).toEqual(['fits']);
    });

    it('a header object carrying the AMQP client\'s type marker "!"', async () => {
      await failsAlone(
        sqsRecord(withProperties('marker', { headers: { when: { '!': 'nonsense', value: 1 } } })),
        'message.properties.headers.when',
      );
    });

    it('a task message whose SQS message attribute names are too long for AMQP header keys', async () => {
      const body = readFileSync(fixturePath('taskmessage-document-tenant-workflow.json'), 'utf8');
      const bad = sqsRecord(body, {
        ['a'.repeat(256)]: { dataType: 'String', stringValue: '1', stringListValues: [], binaryListValues: [] },
      });
      const result = await bed.service.route(sqsEvent([bad]));
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
      expect(bed.recorded.failures).toEqual([
        expect.objectContaining({ kind: 'Rejected', fields: ['messageAttributes'] }),
      ]);
    });
  });

  describe('item 7: null is not missing', () => {
    it('a task message with "to": null says the field must be a string, not that it is required', async () => {
      const task = JSON.parse(readFileSync(fixturePath('taskmessage-document-tenant-workflow.json'), 'utf8'));
      const bad = sqsRecord(JSON.stringify({ ...task, to: null }));
      expect((await bed.service.route(sqsEvent([bad]))).batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
      expect(bed.recorded.failures).toEqual([
        expect.objectContaining({
          kind: 'Rejected',
          fields: ['to'],
          reason: expect.stringMatching(/to: must be a string, not null$/),
        }),
      ]);
    });
  });
});
