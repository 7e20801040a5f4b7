import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type BatchOutcome, SqsEventSource } from '../../../local/sqs/event-source';
import { afterProcessQueues, POLLER_CONCURRENCY, routerEventSource } from '../../../local/sqs/settings';
import { eventually } from '../../harness/eventually';
import { queueDepth, sendBodies, startTestQueues } from '../../harness/sqs';

type Handler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

/** Each invocation, as the handler saw it: when, and each record's body and receive count. */
interface Invocation {
  at: number;
  records: Array<{ body: string; receiveCount: number; messageId: string }>;
}

describe('the local SQS event source behaves like Lambda’s (fauxqs)', () => {
  let queues: Awaited<ReturnType<typeof startTestQueues>>;
  let source: SqsEventSource | undefined;
  let invocations: Invocation[];
  let outcomes: BatchOutcome[];

  beforeEach(async () => {
    // As on AWS, the visibility timeout outlasts the batching window and the invocation.
    queues = await startTestQueues({ visibilityTimeoutSeconds: 2, maxReceiveCount: 3 });
    invocations = [];
    outcomes = [];
  });
  afterEach(async () => {
    await source?.stop();
    source = undefined;
    await queues.stop();
  });

  function run(handler: Handler, settings: { batchSize?: number; window?: number; partial?: boolean } = {}) {
    source = new SqsEventSource({
      client: queues.client,
      queueUrl: queues.queue.url,
      queueArn: queues.queue.arn,
      region: queues.emulator.region,
      batchSize: settings.batchSize ?? 10,
      maximumBatchingWindowSeconds: settings.window ?? 0,
      reportBatchItemFailures: settings.partial ?? true,
      invoke: (event) => {
        invocations.push({
          at: Date.now(),
          records: event.Records.map((r) => ({
            body: r.body,
            messageId: r.messageId,
            receiveCount: Number(r.attributes.ApproximateReceiveCount),
          })),
        });
        return handler(event);
      },
      onBatch: (outcome) => outcomes.push(outcome),
    });
    source.start();
  }

  const bodies = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const succeed: Handler = async () => ({ batchItemFailures: [] });
  const delivered = () => invocations.flatMap((i) => i.records.map((r) => r.body));
  const drained = () =>
    eventually(
      async () => ((await queueDepth(queues.client, queues.queue.url)) === 0 ? true : undefined),
      'an empty queue',
    );

  it('reads its settings from serverless.yml and infra/sqs.yml', () => {
    expect(routerEventSource()).toEqual({
      batchSize: 100,
      maximumBatchingWindowSeconds: 1,
      reportBatchItemFailures: true,
    });
    expect(afterProcessQueues('dev')).toEqual({
      queueName: 'fairway-dev-after-process',
      deadLetterQueueName: 'fairway-dev-after-process-dlq',
      visibilityTimeoutSeconds: 200,
      maxReceiveCount: 5,
      messageRetentionSeconds: 1_209_600,
    });
  });

  it('invokes with at most batchSize records and delivers each message once', async () => {
    await sendBodies(queues.client, queues.queue.url, bodies(25));
    run(succeed, { batchSize: 4, window: 1 });
    await drained();
    await eventually(async () => (delivered().length >= 25 ? true : undefined), '25 deliveries');
    expect(invocations.every((i) => i.records.length <= 4)).toBe(true);
    expect(invocations[0]!.records).toHaveLength(4);
    expect(delivered().sort()).toEqual(bodies(25).sort());
  });

  it('runs one invocation at a time (POLLER_CONCURRENCY: the router count npm start gives the distributor)', async () => {
    await sendBodies(queues.client, queues.queue.url, bodies(12));
    let running = 0;
    let most = 0;
    run(
      async () => {
        most = Math.max(most, ++running);
        // Long enough for a second batch to be received meanwhile, were the poller to gather one.
        await new Promise((resolve) => setTimeout(resolve, 100));
        running--;
        return { batchItemFailures: [] };
      },
      { batchSize: 3 },
    );
    await eventually(async () => (delivered().length >= 12 ? true : undefined), '12 deliveries');
    expect(invocations.length).toBeGreaterThan(1);
    expect(most).toBe(POLLER_CONCURRENCY);
  });

  it('gathers records for the batching window before invoking with fewer than batchSize', async () => {
    run(succeed, { batchSize: 10, window: 1 });
    await sendBodies(queues.client, queues.queue.url, ['early']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await sendBodies(queues.client, queues.queue.url, ['late']);
    await eventually(async () => (delivered().length >= 2 ? true : undefined), 'both messages');
    expect(invocations.map((i) => i.records.map((r) => r.body))).toEqual([['early', 'late']]);
  });

  it('without a batching window, invokes with what one receive returned', async () => {
    run(succeed, { batchSize: 10, window: 0 });
    await sendBodies(queues.client, queues.queue.url, ['early']);
    await eventually(async () => (delivered().length >= 1 ? true : undefined), 'the first message');
    await sendBodies(queues.client, queues.queue.url, ['late']);
    await eventually(async () => (delivered().length >= 2 ? true : undefined), 'the second message');
    expect(invocations.map((i) => i.records.map((r) => r.body))).toEqual([['early'], ['late']]);
  });

  it('returns only the failed records of a partial batch response, after the visibility timeout, counted', async () => {
    let first = true;
    run(
      async (event) => {
        if (!first) return { batchItemFailures: [] };
        first = false;
        const bad = event.Records.find((r) => r.body === 'bad')!;
        return { batchItemFailures: [{ itemIdentifier: bad.messageId }] };
      },
      { window: 1 },
    );
    await sendBodies(queues.client, queues.queue.url, ['ok1', 'bad', 'ok2']);
    await eventually(async () => (invocations.length >= 2 ? true : undefined), 'the redelivery');
    await drained();
    expect(invocations[0]!.records.map((r) => r.body).sort()).toEqual(['bad', 'ok1', 'ok2']);
    expect(invocations[1]!.records).toEqual([expect.objectContaining({ body: 'bad', receiveCount: 2 })]);
    // Hidden for the queue's visibility timeout (2 s here), not redelivered at once.
    expect(invocations[1]!.at - invocations[0]!.at).toBeGreaterThanOrEqual(1900);
    expect(invocations).toHaveLength(2);
  });

  it('returns the whole batch when the invocation throws', async () => {
    let calls = 0;
    run(
      async () => {
        if (++calls === 1) throw new Error('broker down');
        return { batchItemFailures: [] };
      },
      { window: 1 },
    );
    await sendBodies(queues.client, queues.queue.url, ['a', 'b', 'c']);
    await drained();
    await eventually(async () => (delivered().length >= 6 ? true : undefined), 'the batch again');
    expect(outcomes[0]!.error).toBeInstanceOf(Error);
    expect(outcomes[0]!.failed.size).toBe(3);
    const again = invocations.slice(1).flatMap((i) => i.records);
    expect(again.map((r) => r.body).sort()).toEqual(['a', 'b', 'c']);
    expect(again.every((r) => r.receiveCount === 2)).toBe(true);
  });

  it('returns the whole batch when the response names a record that is not in it', async () => {
    let calls = 0;
    run(async () => (++calls === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined), {
      window: 1,
    });
    await sendBodies(queues.client, queues.queue.url, ['a', 'b']);
    await drained();
    await eventually(async () => (delivered().length >= 4 ? true : undefined), 'the batch again');
    expect(outcomes[0]!.failed.size).toBe(2);
  });

  it('moves a record that keeps failing to the DLQ after maxReceiveCount receives, and stops invoking it', async () => {
    run(async (event) => ({ batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) }));
    await sendBodies(queues.client, queues.queue.url, ['poison']);
    await eventually(
      async () => ((await queueDepth(queues.client, queues.deadLetterQueue.url)) === 1 ? true : undefined),
      'the message in the DLQ',
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(invocations.map((i) => i.records[0]!.receiveCount)).toEqual([1, 2, 3]);
    expect(await queueDepth(queues.client, queues.queue.url)).toBe(0);
  });
});
