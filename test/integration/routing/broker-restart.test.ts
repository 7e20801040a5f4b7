import { connect } from 'amqplib';
import { createObservability, lambdaHandler } from '../../../lib/wiring/lambda-function';
import { createRouterService } from '../../../lib/wiring/router';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { holdOwnNode } from '../../harness/own-node-holds';
import type { TestVhost } from '../../harness/rabbit';
import { event, lambdaContext, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';
import { services } from '../../harness/services';
import { createOwnNodeVhost, restartOwnNode } from '../../harness/tls';

holdOwnNode('alone');

// Restarts the tests' own RabbitMQ node (.ci/services.sh), never the machine-wide one: a test restarts only what it started.
describe('router across a RabbitMQ restart', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let service: ReturnType<typeof createRouterService>;

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createOwnNodeVhost()]);
    await dynamo.createTables();
    const setup = await connect(rabbit.amqpUrl);
    const channel = await setup.createChannel();
    await channel.assertQueue('worker-in', { durable: true, arguments: { 'x-max-priority': 10 } });
    await setup.close();
    service = createRouterService(routerConfig(rabbit, dynamo), recordingReport().report);
  });
  afterAll(async () => {
    await service?.close();
    await Promise.all([dynamo?.stop(), rabbit?.delete()]);
  });

  it('reconnects in the next invocation and routes', async () => {
    const handler = lambdaHandler(createObservability('router'), service.route);
    const before = sqsRecord(event('worker-in', 't1', 'before'));
    expect(await handler(sqsEvent([before]), lambdaContext)).toEqual({ batchItemFailures: [] });

    // Witnesses: a connection to the restarted node must drop, one to the machine-wide node must not.
    const [own, machineWide] = await Promise.all([connect(rabbit.amqpUrl), connect(services.amqpUrl)]);
    const dropped = new Promise<'dropped'>((resolve) => own.once('close', () => resolve('dropped')));
    own.on('error', () => undefined);
    await restartOwnNode();
    expect(await dropped).toBe('dropped');
    await machineWide.close(); // rejects if the machine-wide broker had closed it
    // The management listener comes back a little after the broker; the next test file needs it.
    await eventually(
      () =>
        rabbit.api('GET', '/api/overview').then(
          () => true,
          () => undefined,
        ),
      'the management API after the restart',
    );

    const after = sqsRecord(event('worker-in', 't1', 'after'));
    expect(await handler(sqsEvent([after]), lambdaContext)).toEqual({ batchItemFailures: [] });

    const check = await connect(rabbit.amqpUrl);
    try {
      const channel = await check.createChannel();
      const bodies: string[] = [];
      for (
        let got = await channel.get('worker-in»/t1', { noAck: true });
        got;
        got = await channel.get('worker-in»/t1', { noAck: true })
      ) {
        bodies.push(got.content.toString());
      }
      // Durable staging queue and persistent messages: the one routed before the restart survived it.
      expect(bodies).toEqual(['before', 'after']);
    } finally {
      await check.close();
    }
  }, 120_000);
});
