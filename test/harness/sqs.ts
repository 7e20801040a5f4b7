import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type SqsEmulator, startSqsEmulator } from '../../local/sqs/emulator';
import { type AfterProcessQueues, createAfterProcessQueues } from '../../local/sqs/queues';
import { afterProcessQueues } from '../../local/sqs/settings';

export interface TestQueues extends AfterProcessQueues {
  emulator: SqsEmulator;
  client: SQSClient;
  stop(): Promise<void>;
}

/** The emulator with infra/sqs.yml's after-process queue and DLQ; a short visibility timeout keeps tests quick. */
export async function startTestQueues(overrides: { visibilityTimeoutSeconds?: number; maxReceiveCount?: number } = {}) {
  const emulator = await startSqsEmulator();
  const client = emulator.client();
  const queues = await createAfterProcessQueues(client, {
    ...afterProcessQueues('test'),
    visibilityTimeoutSeconds: 1,
    ...overrides,
  });
  return {
    ...queues,
    emulator,
    client,
    async stop() {
      client.destroy();
      await emulator.stop();
    },
  } satisfies TestQueues;
}

/** Visible + in flight + delayed messages of a queue. */
export async function queueDepth(client: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return Object.values(Attributes).reduce((sum, n) => sum + Number(n), 0);
}

export { sendBodies } from '../../local/sqs/send';
