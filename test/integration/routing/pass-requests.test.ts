import { createServer } from 'node:net';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { createRouterService } from '../../../lib/wiring/router';
import { DynamoWorkBoard } from '../../../lib/work-board/work-board-store';
import { startLambdaInvokeServer } from '../../../local/lambda-invoke-server';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/** A port nothing listens on: an invoke there fails as an unreachable Lambda API would. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('router: asking for distributor passes (real RabbitMQ, dynalite, the Lambda client on a local endpoint)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    const { api } = rabbit;
    for (const queue of ['worker-in', 'worker-out', 'direct']) {
      await api('PUT', `/api/queues/${encodeURIComponent(rabbit.vhost)}/${queue}`, { durable: true });
    }
  });
  afterAll(() => Promise.all([dynamo?.stop(), rabbit?.delete()]));

  const config = (endpoint: string) =>
    routerConfig(rabbit, dynamo, {
      DISTRIBUTOR_FUNCTION_NAME: 'fairway-test-distributor',
      DISTRIBUTOR_TABLE: 'DistributorStateTable',
      LAMBDA_ENDPOINT: endpoint,
      ROUTER_TARGETS: '{"direct":{"bypassStaging":true}}',
    });

  it('one board update per batch; one execution started for staged targets and none for a bypass target', async () => {
    const events: unknown[] = [];
    const lambda = await startLambdaInvokeServer(async (_name, e) => events.push(e));
    const recorded = recordingReport();
    const service = createRouterService(config(lambda.endpoint), recorded.report);
    try {
      const batch = [event('worker-in', 'a', 'one'), event('worker-in', 'b', 'two'), event('direct', 'a', 'x')];
      expect(await service.route(sqsEvent(batch.map((e) => sqsRecord(e))))).toEqual({ batchItemFailures: [] });
      expect(await service.route(sqsEvent([sqsRecord(event('worker-in', 'c', 'three'))]))).toEqual({
        batchItemFailures: [],
      });
      await lambda.idle();
      expect(lambda.invocations.get('fairway-test-distributor')).toBe(1);
      expect(events).toEqual([{ source: 'fairway.work' }]);
      const board = await new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable').read();
      // Two batches, two versions; the bypass target never goes on the board.
      expect(board.version).toBe(2);
      expect([...board.targets.keys()]).toEqual(['worker-in']);
      expect(recorded.passRequestFailures).toEqual([]);
    } finally {
      await service.close();
      await lambda.close();
    }
  });

  it('keeps the records routed when the pass cannot be started, warns, and lets the next batch try again', async () => {
    // The first test's execution was never run (the local endpoint only records it): its start is still pending.
    await dynamo.doc.send(new DeleteCommand({ TableName: 'DistributorStateTable', Key: { pk: 'work-board' } }));
    const recorded = recordingReport();
    const service = createRouterService(config(`http://127.0.0.1:${await closedPort()}`), recorded.report);
    try {
      const record = sqsRecord(event('worker-out', 'd', 'four'));
      expect(await service.route(sqsEvent([record]))).toEqual({ batchItemFailures: [] });
      expect(recorded.passRequestFailures.map((f) => f.target)).toEqual(['worker-out']);
      expect(String(recorded.passRequestFailures[0]!.error)).toMatch(/lambda:InvokeFunction/);
      // The failed start withdrew its mark: the next batch starts an execution at once.
      const board = new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable');
      expect(await board.markStarting(Date.now(), Date.now() + 10_000)).toBe(true);
    } finally {
      await service.close();
    }
  });
});
