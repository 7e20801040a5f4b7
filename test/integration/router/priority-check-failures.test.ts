import { type ChannelModel, connect } from 'amqplib';
import { createRouterService } from '../../../lib/routing/service';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from './fixtures';

describe('router with a tenant-counter table that does not exist (real RabbitMQ, dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let connection: ChannelModel;

  beforeAll(async () => {
    // No tables: every priority check meets DynamoDB's ResourceNotFoundException.
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    connection = await connect(rabbit.amqpUrl);
    const channel = await connection.createChannel();
    await channel.assertQueue('direct', { durable: true, arguments: { 'x-max-priority': 10 } });
    await channel.close();
  });
  afterAll(async () => {
    await connection?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });

  it('fails every record whose priority check failed, publishing none of them', async () => {
    const recorded = recordingReport();
    const service = createRouterService(
      routerConfig(rabbit, dynamo, { ROUTER_TARGETS: '{"direct":{"bypassStaging":true}}' }),
      recorded.report,
    );
    try {
      const records = [sqsRecord(event('direct', 't1', 'a')), sqsRecord(event('direct', 't2', 'b'))];
      // Tenants are checked in parallel, so the failures come in the order the checks failed.
      const { batchItemFailures } = await service.route(sqsEvent(records));
      expect(batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(records.map((r) => r.messageId).sort());
      expect(recorded.failures.map((f) => [f.messageId, f.kind]).sort()).toEqual(
        records.map((r) => [r.messageId, 'PriorityFailures']).sort(),
      );
      expect(recorded.counts).toMatchObject({ Routed: 0, Rejected: 0, PriorityFailures: 2, BrokerFailures: 0 });
      const channel = await connection.createChannel();
      expect((await channel.checkQueue('direct')).messageCount).toBe(0);
      await channel.close();
    } finally {
      await service.close();
    }
  });
});
