import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Channel, type ChannelModel, connect } from 'amqplib';
import type { SQSEvent } from 'aws-lambda';
import type { RouterReport } from '../../../lib/routing/report';
import { createObservability, lambdaHandler } from '../../../lib/wiring/lambda-function';
import { createRouterService } from '../../../lib/wiring/router';
import { runCli } from '../../../local/cli/cli';
import { SqsEventSource } from '../../../local/sqs/event-source';
import { afterProcessQueues, routerEventSource } from '../../../local/sqs/settings';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { event, lambdaContext, recordingReport, routerConfig } from '../../harness/routing-events';
import { queueDepth, sendBodies, startTestQueues } from '../../harness/sqs';

/**
 * Issue 16's acceptance run: a poisoned event is retried maxReceiveCount times through the real
 * router, lands in the DLQ, is listed with its tenant, target and logged reason, and after the
 * cause is fixed `fairway dlq redrive --tenant …` brings it back and it is routed once.
 */
describe('a poisoned after-process event: DLQ, then redrive by tenant (fauxqs, RabbitMQ, dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let queues: Awaited<ReturnType<typeof startTestQueues>>;
  let connection: ChannelModel;
  let channel: Channel;
  let service: ReturnType<typeof createRouterService>;
  let source: SqsEventSource;
  const receivesOf = new Map<string, number[]>();
  const logFile = join(mkdtempSync(join(tmpdir(), 'fairway-dlq-')), 'router.log');
  let env: Record<string, string>;

  // The router's failure lines go to a log file as its Powertools logger writes them (docs/router.md).
  const recorded = recordingReport();
  const routed = recorded.tenants;
  const report: RouterReport = {
    ...recorded.report,
    failed: (failure) =>
      appendFileSync(
        logFile,
        `${JSON.stringify({ level: 'WARN', message: 'After-process event not routed', service: 'fairway', ...failure })}\n`,
      ),
  };

  beforeAll(async () => {
    [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
    await dynamo.createTables();
    // infra/sqs.yml's maxReceiveCount; a visibility timeout of 2 s instead of 200 s keeps the test short.
    queues = await startTestQueues({ visibilityTimeoutSeconds: 2 });
    connection = await connect(rabbit.amqpUrl);
    channel = await connection.createChannel();
    await channel.assertQueue('worker-in', { durable: true, arguments: { 'x-max-priority': 10 } });
    service = createRouterService(routerConfig(rabbit, dynamo), report);
    const handler = lambdaHandler(createObservability('router'), service.route);
    source = new SqsEventSource({
      ...routerEventSource(),
      client: queues.client,
      queueUrl: queues.queue.url,
      queueArn: queues.queue.arn,
      region: queues.emulator.region,
      invoke: (sqsEvent: SQSEvent) => {
        for (const r of sqsEvent.Records) {
          receivesOf.set(r.messageId, [
            ...(receivesOf.get(r.messageId) ?? []),
            Number(r.attributes.ApproximateReceiveCount),
          ]);
        }
        return handler(sqsEvent, lambdaContext);
      },
    });
    source.start();
    env = {
      SQS_ENDPOINT: queues.emulator.endpoint,
      AWS_REGION: queues.emulator.region,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      FAIRWAY_STAGE: 'test',
    };
  });
  afterAll(async () => {
    await source?.stop();
    await service?.close();
    await connection?.close();
    await Promise.all([queues?.stop(), dynamo?.stop(), rabbit?.delete()]);
  });

  async function fairway(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli([...argv, '--json'], env, {
      out: (t) => (stdout += t),
      err: (t) => (stderr += t),
    });
    if (code !== 0) throw new Error(`fairway ${argv.join(' ')} exited ${code}: ${stderr}`);
    return JSON.parse(stdout);
  }

  async function drain(queue: string): Promise<string[]> {
    const bodies: string[] = [];
    for (let got = await channel.get(queue, { noAck: true }); got; got = await channel.get(queue, { noAck: true }))
      bodies.push(got.content.toString());
    return bodies;
  }

  it('retries the poisoned event maxReceiveCount times, keeps it in the DLQ, and routes it once after a redrive', async () => {
    const { maxReceiveCount } = afterProcessQueues('test');
    await sendBodies(queues.client, queues.queue.url, [
      JSON.stringify(event('not-yet-declared', 'clinic-a', 'secret-document-a')),
      JSON.stringify(event('worker-in', 'clinic-b', 'document-b')),
    ]);

    const dlq = queues.deadLetterQueue.url;
    await eventually(async () => ((await queueDepth(queues.client, dlq)) === 1 ? true : undefined), 'the DLQ', 40_000);
    const [poisonId] = [...receivesOf].find(([, counts]) => counts.length > 1)!;
    expect(receivesOf.get(poisonId)).toEqual(Array.from({ length: maxReceiveCount }, (_, i) => i + 1));
    expect(await drain('worker-in»/clinic-b')).toEqual(['document-b']);

    const listed = await fairway('dlq', '--log', logFile);
    expect(listed).toMatchObject({ count: 1, queue: 'fairway-test-after-process-dlq' });
    expect(listed.messages).toEqual([
      expect.objectContaining({
        messageId: poisonId,
        tenant: 'clinic-a',
        target: 'not-yet-declared',
        receives: expect.any(Number),
        failure: expect.objectContaining({
          kind: expect.any(String),
          reason: expect.stringContaining('does not exist'),
        }),
      }),
    ]);
    expect(JSON.stringify(listed)).not.toContain('secret-document-a');

    expect(await fairway('dlq', 'redrive', '--tenant', 'clinic-b')).toMatchObject({ moved: 0 });
    expect(await fairway('dlq', 'redrive', '--tenant', 'clinic-a', '--dry-run')).toMatchObject({
      dryRun: true,
      moved: 1,
    });
    expect(await queueDepth(queues.client, dlq)).toBe(1);

    // The cause: the target did not exist. Fixed, the redriven event goes through.
    await channel.assertQueue('not-yet-declared', { durable: true, arguments: { 'x-max-priority': 10 } });
    expect(await fairway('dlq', 'redrive', '--tenant', 'clinic-a')).toMatchObject({
      mode: 'copy-and-delete',
      moved: 1,
    });
    expect(await queueDepth(queues.client, dlq)).toBe(0);
    const staging = 'not-yet-declared»/clinic-a';
    await eventually(
      async () => (routed.some((r) => r.tenant === 'clinic-a') ? true : undefined),
      'the redriven event routed',
    );
    await eventually(
      async () => ((await queueDepth(queues.client, queues.queue.url)) === 0 ? true : undefined),
      'the queue empty',
    );
    // Long enough for a duplicate to show up if the redrive or the poller had made one.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await drain(staging)).toEqual(['secret-document-a']);
    expect(routed.filter((r) => r.tenant === 'clinic-a').reduce((n, r) => n + r.documents, 0)).toBe(1);
  });
});
