import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { FairwayError } from '../../lib/platform/errors';
import { type EventSummary, summarizeEvent } from './event-summary';
import type { LoggedFailure } from './failure-log';

/** An SQS call of `fairway dlq` failed; the message says which queue, what was being done, and what to check. */
export class DeadLetterQueueError extends FairwayError {}

export interface DlqQueues {
  sourceName: string;
  deadLetterName: string;
}

export interface ResolvedQueues {
  sourceUrl: string;
  deadLetterUrl: string;
  deadLetterArn: string;
  /** Messages SQS counts in the DLQ (visible + in flight), before any scan. */
  approximateCount: number;
}

export interface DeadLetter extends EventSummary {
  messageId: string;
  sentAt: string;
  receives: number;
  /** The router's last logged reason, when a log was given and holds it. */
  failure?: LoggedFailure;
  body?: string;
}

export interface Filter {
  tenant?: string;
  target?: string;
}

/** How long a scan hides what it has read, so that it sees each message once; then they are made visible again. */
const scanVisibilitySeconds = 60;

export async function resolveQueues(client: SQSClient, queues: DlqQueues): Promise<ResolvedQueues> {
  const url = (name: string) =>
    call(`finding the queue ${name}`, () => client.send(new GetQueueUrlCommand({ QueueName: name }))).then(
      (r) => r.QueueUrl!,
    );
  const [sourceUrl, deadLetterUrl] = [await url(queues.sourceName), await url(queues.deadLetterName)];
  const { Attributes = {} } = await call(`reading ${queues.deadLetterName}'s attributes`, () =>
    client.send(
      new GetQueueAttributesCommand({
        QueueUrl: deadLetterUrl,
        AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    ),
  );
  return {
    sourceUrl,
    deadLetterUrl,
    deadLetterArn: Attributes.QueueArn!,
    approximateCount:
      Number(Attributes.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/**
 * Every message of the DLQ, read without consuming it: SQS has no peek, so each is received
 * (hidden for the scan) and made visible again at the end. Bodies only when asked for.
 */
export async function listDeadLetters(
  client: SQSClient,
  queues: ResolvedQueues,
  options: { includeBody: boolean; reasons: ReadonlyMap<string, LoggedFailure>; longPoll: boolean },
): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  await scan(client, queues.deadLetterUrl, options.longPoll, async (message) => {
    letters.push(describe(message, options));
    return 'keep';
  });
  return letters.sort((a, b) => a.sentAt.localeCompare(b.sentAt));
}

export interface RedriveResult {
  mode: 'message-move-task' | 'copy-and-delete';
  /** Messages moved back (or that would be, with --dry-run); for a move task, SQS's count at the start. */
  moved: number;
  messages: DeadLetter[];
  /** The SQS message move task's handle (ListMessageMoveTasks shows its progress). */
  taskHandle?: string;
}

/**
 * Moves dead letters back to the after-process queue. All of them, on AWS, with an SQS message
 * move task (SQS's own redrive; it sends them to the queue they came from). Filtered, or on an
 * emulator without move tasks, message by message: send a copy to the source queue, then delete
 * the dead letter. A failure between the two leaves that one message in both queues (the router
 * may route it twice); none is ever lost.
 */
export async function redriveDeadLetters(
  client: SQSClient,
  queues: ResolvedQueues,
  options: { filter: Filter; dryRun: boolean; useMoveTask: boolean; longPoll: boolean },
): Promise<RedriveResult> {
  const { filter, dryRun } = options;
  const filtered = filter.tenant !== undefined || filter.target !== undefined;
  if (options.useMoveTask && !filtered && !dryRun) {
    const { TaskHandle } = await call('starting a message move task (sqs:StartMessageMoveTask)', () =>
      client.send(new StartMessageMoveTaskCommand({ SourceArn: queues.deadLetterArn })),
    );
    return { mode: 'message-move-task', moved: queues.approximateCount, messages: [], taskHandle: TaskHandle! };
  }
  const messages: DeadLetter[] = [];
  await scan(client, queues.deadLetterUrl, options.longPoll, async (message) => {
    const letter = describe(message, { includeBody: false, reasons: new Map() });
    if (!matches(letter, filter)) return 'keep';
    messages.push(letter);
    if (dryRun) return 'keep';
    await call(`sending message ${letter.messageId} back to the after-process queue`, () =>
      client.send(
        new SendMessageCommand({
          QueueUrl: queues.sourceUrl,
          MessageBody: message.Body!,
          // Back in its tenant's group, so a redrive of one tenant's letters stays fair to the others.
          ...(message.Attributes?.MessageGroupId ? { MessageGroupId: message.Attributes.MessageGroupId } : {}),
          ...(message.MessageAttributes ? { MessageAttributes: message.MessageAttributes } : {}),
        }),
      ),
    );
    await call(
      `deleting message ${letter.messageId} from the DLQ after it was sent back (it is now in both queues)`,
      () =>
        client.send(
          new DeleteMessageCommand({ QueueUrl: queues.deadLetterUrl, ReceiptHandle: message.ReceiptHandle! }),
        ),
    );
    return 'moved';
  });
  return { mode: 'copy-and-delete', moved: messages.length, messages };
}

export function matches(letter: EventSummary, filter: Filter): boolean {
  return (
    (filter.tenant === undefined || letter.tenant === filter.tenant) &&
    (filter.target === undefined || letter.target === filter.target)
  );
}

function describe(
  message: Message,
  options: { includeBody: boolean; reasons: ReadonlyMap<string, LoggedFailure> },
): DeadLetter {
  const failure = options.reasons.get(message.MessageId!);
  return {
    messageId: message.MessageId!,
    sentAt: new Date(Number(message.Attributes?.SentTimestamp ?? 0)).toISOString(),
    receives: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
    ...summarizeEvent(message.Body ?? ''),
    ...(failure ? { failure } : {}),
    ...(options.includeBody ? { body: message.Body ?? '' } : {}),
  };
}

/**
 * Receives every message once, hands it to `visit`, and makes every message it did not move
 * visible again, also when a visit fails half way through a batch. `longPoll` on AWS: a short
 * receive samples only some servers and may come back empty while messages remain.
 */
async function scan(
  client: SQSClient,
  queueUrl: string,
  longPoll: boolean,
  visit: (message: Message) => Promise<'keep' | 'moved'>,
): Promise<void> {
  const unmoved = new Set<string>();
  try {
    for (;;) {
      const { Messages = [] } = await call('receiving from the DLQ', () =>
        client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: scanVisibilitySeconds,
            WaitTimeSeconds: longPoll ? 1 : 0,
            MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount', 'MessageGroupId'],
            MessageAttributeNames: ['All'],
          }),
        ),
      );
      if (Messages.length === 0) return;
      for (const message of Messages) unmoved.add(message.ReceiptHandle!);
      for (const message of Messages) {
        if ((await visit(message)) === 'moved') unmoved.delete(message.ReceiptHandle!);
      }
    }
  } finally {
    const handles = [...unmoved];
    for (let i = 0; i < handles.length; i += 10) {
      const entries = handles
        .slice(i, i + 10)
        .map((handle, j) => ({ Id: String(j), ReceiptHandle: handle, VisibilityTimeout: 0 }));
      try {
        await client.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      } catch {
        // They become visible again by themselves when the scan's visibility timeout runs out.
      }
    }
  }
}

/** Runs one SQS call; its failure becomes a DeadLetterQueueError saying what was being done, with the cause kept. */
async function call<T>(doing: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw new DeadLetterQueueError(`SQS failed while ${doing}: ${describeSqsError(error)}`, { cause: error });
  }
}

function describeSqsError(error: unknown): string {
  const name = error instanceof Error ? error.name : 'Error';
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue')
    return 'the queue does not exist: check FAIRWAY_STAGE, AWS_REGION (and SQS_ENDPOINT locally), or deploy the stack';
  if (name === 'AccessDenied' || name === 'AccessDeniedException')
    return 'access denied: the caller needs sqs:GetQueueUrl, GetQueueAttributes, ReceiveMessage, SendMessage, DeleteMessage, ChangeMessageVisibility and StartMessageMoveTask on the after-process queues';
  if (name === 'RequestThrottled' || name === 'ThrottlingException' || status === 429)
    return 'throttled by SQS: wait a moment and run the command again';
  if (status !== undefined && status >= 500)
    return `SQS answered ${status} (${name}): run the command again; a redrive picks up where it stopped`;
  return `${name}: ${error instanceof Error ? error.message : String(error)}`;
}
