import { type ChannelModel, connect } from 'amqplib';
import type { SQSBatchResponse } from 'aws-lambda';
import { createRouterService } from '../../../lib/wiring/router';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/**
 * Issue 12, item 6: a batch whose every record failed for an infrastructure reason fails the
 * invocation, so the Lambda error metric, the event source's back-off and the alarms see it (as
 * Powertools Batch does with its full-batch failure). A partial failure stays a partial response.
 */
describe('router: a batch that failed whole on its infrastructure fails the invocation (real services)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let connection: ChannelModel;

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    connection = await connect(rabbit.amqpUrl);
    const channel = await connection.createChannel();
    await channel.assertQueue('worker-in', { durable: true, arguments: { 'x-max-priority': 10 } });
  });
  afterAll(async () => {
    await connection?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });

  async function route(extra: Record<string, string>, records: ReturnType<typeof sqsRecord>[]) {
    const recorded = recordingReport();
    const service = createRouterService(routerConfig(rabbit, dynamo, extra), recorded.report);
    try {
      const outcome: { response?: SQSBatchResponse; error?: Error } = await service.route(sqsEvent(records)).then(
        (response) => ({ response }),
        (error: Error) => ({ error }),
      );
      return { ...outcome, recorded };
    } finally {
      await service.close();
    }
  }

  it('throws when the broker is unreachable for every record, after reporting each', async () => {
    const records = [sqsRecord(event('worker-in', 'offline', 'a')), sqsRecord(event('worker-in', 'offline', 'b'))];
    const { error, recorded } = await route(
      { AMQP_URL: `amqp://guest:secret@127.0.0.1:1/${encodeURIComponent(rabbit.vhost)}` },
      records,
    );
    expect(error?.name).toBe('BatchFailedError');
    expect(error?.message).toMatch(/2 of 2 records failed \(BrokerFailures\)/);
    expect(error?.message).not.toContain('secret');
    expect(recorded.failures.map((f) => f.kind)).toEqual(['BrokerFailures', 'BrokerFailures']);
    expect(recorded.counts.BrokerFailures).toBe(2);
  });

  it('throws when DynamoDB is unreachable for every record', async () => {
    const records = [sqsRecord(event('worker-in', 't1', 'a')), sqsRecord(event('worker-in', 't2', 'b'))];
    const { error, recorded } = await route({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' }, records);
    expect(error?.name).toBe('BatchFailedError');
    expect(recorded.failures.map((f) => f.kind)).toEqual(['PriorityFailures', 'PriorityFailures']);
  }, 60_000);

  it('answers with the failed records when only some failed, and when every record was a bad event', async () => {
    const good = sqsRecord(event('worker-in', 'fine', 'ok'));
    const bad = sqsRecord('not json');
    const partial = await route({}, [good, bad]);
    expect(partial.response).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });

    // Bad events are the sender's fault, not the infrastructure's: the dead-letter queue takes them.
    const allBad = await route({}, [sqsRecord('not json'), sqsRecord('{}')]);
    expect(allBad.response?.batchItemFailures).toHaveLength(2);
  });
});
