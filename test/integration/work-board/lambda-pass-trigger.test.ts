import { createServer, type Socket } from 'node:net';
import { errorText, FairwayError } from '../../../lib/platform/errors';
import { createRouterService } from '../../../lib/wiring/router';
import { LambdaPassTrigger, PASS_TRIGGER_BOUND_MS } from '../../../lib/work-board/pass-trigger';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

/** A Lambda API reached but never answering (a VPC subnet whose route drops the packets after the handshake). */
async function silentServer(): Promise<{ endpoint: string; accepted: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Issue 23 item 11: a pass request that cannot be made in a short bound leaves the records routed. */
describe('the Lambda pass trigger on a Lambda API that never answers (a local TCP server)', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  beforeAll(async () => {
    [silent, dynamo, rabbit] = await Promise.all([silentServer(), startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    await rabbit.api('PUT', `/api/queues/${encodeURIComponent(rabbit.vhost)}/worker-in`, { durable: true });
  });
  afterAll(() => Promise.all([silent?.close(), dynamo?.stop(), rabbit?.delete()]));

  it('gives up within its bound, with an error that names the function and what to check', async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const trigger = new LambdaPassTrigger('fairway-test-distributor', {
      region: 'us-east-1',
      endpoint: silent.endpoint,
    });
    const started = Date.now();
    try {
      const start = trigger.start({ source: 'fairway.work' });
      await expect(start).rejects.toThrow(FairwayError);
      await expect(start).rejects.toThrow(/fairway-test-distributor/);
      expect(errorText(await start.catch((error: unknown) => error))).toMatch(/Lambda did not answer within \d+ ms/);
    } finally {
      trigger.destroy();
    }
    // Its bound, with 2 s for timers a loaded machine fires late: the SDK's own timeouts would hang far longer.
    expect(Date.now() - started).toBeLessThan(PASS_TRIGGER_BOUND_MS + 2_000);
    expect(silent.accepted()).toBeGreaterThan(0); // it did reach the server, which never answered
  });

  it("the router's batch returns with its records routed and the failed request reported", async () => {
    const recorded = recordingReport();
    const config = routerConfig(rabbit, dynamo, {
      DISTRIBUTOR_FUNCTION_NAME: 'fairway-test-distributor',
      DISTRIBUTOR_TABLE: 'DistributorStateTable',
      LAMBDA_ENDPOINT: silent.endpoint,
    });
    const service = createRouterService(config, recorded.report);
    const started = Date.now();
    try {
      const batch = [event('worker-in', 'a', 'one'), event('worker-in', 'b', 'two')].map((e) => sqsRecord(e));
      expect(await service.route(sqsEvent(batch))).toEqual({ batchItemFailures: [] });
    } finally {
      await service.close();
    }
    expect(Date.now() - started).toBeLessThan(PASS_TRIGGER_BOUND_MS + 5_000);
    expect(recorded.counts.Routed).toBe(2);
    expect(recorded.passRequestFailures.map((failure) => failure.target)).toEqual(['worker-in']);
  });
});
