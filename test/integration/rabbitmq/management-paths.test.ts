import { ManagementClient } from '../../../lib/rabbitmq/management';
import { createRouterService } from '../../../lib/wiring/router';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/**
 * Issue 12, item 3: no queue name may change the management API path it is looked up under.
 * Node's fetch resolves `.` and `..` segments, so `/api/queues/<vhost>/..` became `/api/queues/`
 * (200, every queue): a target `..` looked like an existing queue and `..»/t1` was created.
 */
describe('management API paths built from encoded segments (real RabbitMQ)', () => {
  let rabbit: TestVhost;
  let dynamo: EmbeddedDynamo;
  const awkward = ['a%2Fb', 'a/b', 'a#b', 'a?b=1', 'a b', 'ünï©ødé-ワーカー', '.x', 'x..', '%2E%2E'];

  beforeAll(async () => {
    [rabbit, dynamo] = await Promise.all([createTestVhost(), startDynamo()]);
    await dynamo.createTables();
    const { connect } = await import('amqplib');
    const connection = await connect(rabbit.amqpUrl);
    const channel = await connection.createChannel();
    for (const [i, name] of awkward.entries()) {
      await channel.assertQueue(name, { durable: true, arguments: { 'x-max-length': 100 + i } });
    }
    await connection.close();
  });
  afterAll(async () => {
    await Promise.all([rabbit?.delete(), dynamo?.stop()]);
  });

  it.each(awkward.map((name, i) => [name, i]))('reads the queue named %j, and only it', async (name, i) => {
    const client = new ManagementClient(rabbit.managementUrl, rabbit.vhost);
    expect(await client.getQueue(name as string)).toMatchObject({
      name,
      arguments: { 'x-max-length': 100 + (i as number) },
    });
  });

  it.each(['.', '..'])('refuses to look up the queue %j instead of reading another path', async (name) => {
    const client = new ManagementClient(rabbit.managementUrl, rabbit.vhost);
    await expect(client.getQueue(name)).rejects.toThrow(/"\." and "\.\."/);
  });

  it('rejects an event whose target is "." or "..", and creates no staging queue for it', async () => {
    const recorded = recordingReport();
    const service = createRouterService(routerConfig(rabbit, dynamo), recorded.report);
    try {
      const dot = sqsRecord(event('.', 't1', 'x'));
      const dotDot = sqsRecord(event('..', 't1', 'x'));
      const result = await service.route(sqsEvent([dot, dotDot]));
      expect(result.batchItemFailures).toEqual([
        { itemIdentifier: dot.messageId },
        { itemIdentifier: dotDot.messageId },
      ]);
      expect(recorded.failures.map((f) => [f.kind, f.fields])).toEqual([
        ['Rejected', ['target']],
        ['Rejected', ['target']],
      ]);
      const names = (
        await rabbit.api<{ name: string }[]>('GET', `/api/queues/${encodeURIComponent(rabbit.vhost)}?columns=name`)
      ).map((q) => q.name);
      expect(names.filter((n) => n.startsWith('.'))).toEqual(['.x']);
    } finally {
      await service.close();
    }
  });
});
