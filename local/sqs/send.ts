import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { messageGroupId } from './message-group';

/**
 * Sends bodies to a queue ten per call, as workers do, each in its tenant's message group (a fair
 * queue); an entry SQS refuses is an error, never dropped.
 */
export async function sendBodies(client: SQSClient, queueUrl: string, bodies: readonly string[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const { Failed = [] } = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.slice(i, i + 10).map((body, j) => {
          const group = messageGroupId(body);
          return { Id: String(j), MessageBody: body, ...(group === undefined ? {} : { MessageGroupId: group }) };
        }),
      }),
    );
    if (Failed.length > 0) {
      throw new Error(`SQS refused ${Failed.length} after-process event(s): ${Failed.map((f) => f.Code).join(', ')}`);
    }
  }
}
