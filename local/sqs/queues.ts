import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { AfterProcessQueueSettings } from './settings';

export interface QueueRef {
  name: string;
  url: string;
  arn: string;
}

export interface AfterProcessQueues {
  queue: QueueRef;
  deadLetterQueue: QueueRef;
}

/**
 * Creates the after-process queue and its dead-letter queue on an emulator, with infra/sqs.yml's
 * redrive policy and retention. `visibilityTimeoutSeconds` may be shortened (the local stack's speed).
 */
export async function createAfterProcessQueues(
  client: SQSClient,
  settings: AfterProcessQueueSettings,
): Promise<AfterProcessQueues> {
  const retention = String(settings.messageRetentionSeconds);
  const deadLetterQueue = await createQueue(client, settings.deadLetterQueueName, {
    MessageRetentionPeriod: retention,
  });
  const queue = await createQueue(client, settings.queueName, {
    VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
    MessageRetentionPeriod: retention,
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: deadLetterQueue.arn,
      maxReceiveCount: settings.maxReceiveCount,
    }),
  });
  return { queue, deadLetterQueue };
}

async function createQueue(client: SQSClient, name: string, attributes: Record<string, string>): Promise<QueueRef> {
  const { QueueUrl: url } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return { name, url: url!, arn: await queueArn(client, url!) };
}

export async function queueArn(client: SQSClient, url: string): Promise<string> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return Attributes!.QueueArn!;
}
