import type { SQSEvent } from 'aws-lambda';
import { startSqsEmulator } from './emulator';
import { type BatchOutcome, SqsEventSource } from './event-source';
import { createAfterProcessQueues } from './queues';
import { sendBodies } from './send';
import { afterProcessQueues, routerEventSource } from './settings';

export interface LocalAfterProcessQueue {
  /** `SQS_ENDPOINT` for `npx fairway dlq`. */
  endpoint: string;
  maxReceiveCount: number;
  /** Sends after-process events as a worker does. */
  send(bodies: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The local stack's after-process queue: the emulator with infra/sqs.yml's queue and DLQ, and the
 * router's event source mapping from serverless.yml. The visibility timeout is divided by `speed`
 * like the schedules, but never below the batching window + 2 s: a record that became visible
 * again while its batch was still gathering would be delivered twice.
 */
export async function startLocalAfterProcessQueue(options: {
  stage: string;
  speed: number;
  invoke(event: SQSEvent): Promise<unknown>;
  onBatch(outcome: BatchOutcome): void;
  onError(error: unknown): void;
}): Promise<LocalAfterProcessQueue> {
  const emulator = await startSqsEmulator();
  const client = emulator.client();
  const eventSource = routerEventSource();
  const settings = afterProcessQueues(options.stage);
  const { queue } = await createAfterProcessQueues(client, {
    ...settings,
    visibilityTimeoutSeconds: Math.max(
      eventSource.maximumBatchingWindowSeconds + 2,
      Math.round(settings.visibilityTimeoutSeconds / options.speed),
    ),
  });
  const source = new SqsEventSource({
    ...eventSource,
    client,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: emulator.region,
    invoke: options.invoke,
    onBatch: options.onBatch,
    onError: options.onError,
  });
  source.start();
  return {
    endpoint: emulator.endpoint,
    maxReceiveCount: settings.maxReceiveCount,
    send: (bodies) => sendBodies(client, queue.url, bodies),
    async stop() {
      await source.stop();
      client.destroy();
      await emulator.stop();
    },
  };
}
