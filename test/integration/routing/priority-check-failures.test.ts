import { type ChannelModel, connect } from 'amqplib';
import { createRouterService } from '../../../lib/wiring/router';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

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

  const depth = async () => {
    const channel = await connection.createChannel();
    const { messageCount } = await channel.checkQueue('direct');
    await channel.close();
    return messageCount;
  };
  const withService = async (body: (service: ReturnType<typeof createRouterService>) => Promise<void>) => {
    const service = createRouterService(
      routerConfig(rabbit, dynamo, { ROUTER_TARGETS: '{"direct":{"bypassStaging":true}}' }),
      recorded.report,
    );
    try {
      await body(service);
    } finally {
      await service.close();
    }
  };
  let recorded: ReturnType<typeof recordingReport>;
  beforeEach(() => {
    recorded = recordingReport();
  });

  it('fails every record whose priority check failed, publishing none of them', () =>
    withService(async (service) => {
      // A message without a tenant needs no counter (docs/router.md): it is routed, so the batch fails in part.
      const checked = [sqsRecord(event('direct', 't1', 'a')), sqsRecord(event('direct', 't2', 'b'))];
      const tenantless = sqsRecord(event('direct', '', 'c'));
      const before = await depth();
      // Tenants are checked in parallel, so the failures come in the order the checks failed.
      const { batchItemFailures } = await service.route(sqsEvent([...checked, tenantless]));
      expect(batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(checked.map((r) => r.messageId).sort());
      expect(recorded.failures.map((f) => [f.messageId, f.kind]).sort()).toEqual(
        checked.map((r) => [r.messageId, 'PriorityFailures']).sort(),
      );
      expect(recorded.counts).toMatchObject({ Routed: 1, Rejected: 0, PriorityFailures: 2, BrokerFailures: 0 });
      expect((await depth()) - before).toBe(1);
    }));

  it('a batch whose every priority check failed fails the invocation, publishing nothing (issue 12, item 6)', () =>
    withService(async (service) => {
      const records = [sqsRecord(event('direct', 't1', 'a')), sqsRecord(event('direct', 't2', 'b'))];
      const before = await depth();
      await expect(service.route(sqsEvent(records))).rejects.toThrow(/2 of 2 records failed \(PriorityFailures\)/);
      expect(recorded.failures.map((f) => f.kind)).toEqual(['PriorityFailures', 'PriorityFailures']);
      expect(await depth()).toBe(before);
    }));
});
