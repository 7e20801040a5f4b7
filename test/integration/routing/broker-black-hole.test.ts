import { connect } from 'amqplib';
import type { SQSBatchResponse } from 'aws-lambda';
import { errorText } from '../../../lib/platform/errors';
import { createRouterService } from '../../../lib/wiring/router';
import { endingOf, type StallingProxy, stallingProxy } from '../../harness/black-hole';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/** The router's timeout (serverless.yml): a batch must come back before it, whatever the broker does. */
const ROUTER_TIMEOUT_MS = 30_000;
const GIVE_UP_MS = 45_000;

// Issue 26 item 4: a broker that stops answering mid-connection (a frozen node, a failover that
// leaves the old connection without a peer) fails the batch's records, before the function timeout.
describe('the router on a broker that stops answering', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let proxy: StallingProxy;
  let service: ReturnType<typeof createRouterService>;
  const recorded = recordingReport();

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    const setup = await connect(rabbit.amqpUrl);
    await (await setup.createChannel()).assertQueue('worker-in', {
      durable: true,
      arguments: { 'x-max-priority': 10 },
    });
    await setup.close();
    proxy = await stallingProxy({ host: '127.0.0.1', port: Number(new URL(rabbit.amqpUrl).port || 5672) });
    const url = new URL(rabbit.amqpUrl);
    url.host = `${proxy.host}:${proxy.port}`;
    service = createRouterService(routerConfig(rabbit, dynamo, { AMQP_URL: url.toString() }), recorded.report);
  });
  afterAll(async () => {
    await proxy?.close();
    await service?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });

  it('fails the records of a batch that needs a new staging queue, before the function timeout', async () => {
    // Warm: the connection, both shared channels and the target's shape.
    expect(await service.route(sqsEvent([sqsRecord(event('worker-in', 'warm', 'one'))]))).toEqual({
      batchItemFailures: [],
    });
    proxy.stall();
    const records = [sqsRecord(event('worker-in', 'new-tenant', 'two'))];
    let response: SQSBatchResponse | undefined;
    const ending = await endingOf(
      service.route(sqsEvent(records)).then((r) => {
        response = r;
      }),
      GIVE_UP_MS,
    );
    expect(ending).toMatchObject({ pending: false });
    expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
    // Every record failed: the invocation fails (BatchFailedError) so that SQS backs off and retries.
    expect(ending.pending ? undefined : errorText(ending.error)).toMatch(/BatchFailedError/);
    expect(response).toBeUndefined();
    const failure = recorded.failures.find((f) => f.messageId === records[0]!.messageId);
    expect(failure).toMatchObject({ kind: 'BrokerFailures' });
    expect(failure?.reason).toMatch(
      /RabbitMQ did not answer queue\.declare of the staging queue "worker-in»\/new-tenant"/,
    );
  });
});
