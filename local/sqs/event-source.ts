import {
  DeleteMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import type { EventSourceSettings } from './settings';

/** What became of one invocation's batch. `failed` holds the message ids SQS will deliver again. */
export interface BatchOutcome {
  records: readonly SQSRecord[];
  failed: ReadonlySet<string>;
  /** The invocation threw (the whole batch returns to the queue). */
  error?: unknown;
}

export interface EventSourceOptions extends EventSourceSettings {
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  invoke(event: SQSEvent): Promise<SQSBatchResponse | undefined | unknown>;
  onBatch?(outcome: BatchOutcome): void;
  /** A receive or delete call failed (the emulator stopping, say); the poller goes on. */
  onError?(error: unknown): void;
}

/**
 * Lambda's SQS event source mapping, locally: long-polls the queue, gathers up to `batchSize`
 * records or until the batching window closes, invokes, and deletes what succeeded. As on AWS:
 *
 * - the queue's visibility timeout hides a received message; nothing is deleted for a failed
 *   record, so it comes back when its timeout runs out, with a higher receive count, and SQS
 *   (not the poller) moves it to the dead-letter queue past the redrive policy's maxReceiveCount;
 * - with ReportBatchItemFailures only the listed records fail; a response naming a record not in
 *   the batch (or with an empty id) fails the whole batch; without it any failure fails them all;
 * - an invocation that throws returns the whole batch.
 */
export class SqsEventSource {
  private running = false;
  private loop?: Promise<void>;
  private readonly abort = new AbortController();

  constructor(private readonly options: EventSourceOptions) {}

  start(): void {
    this.running = true;
    this.loop = this.poll();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await this.loop;
  }

  private async poll(): Promise<void> {
    while (this.running) {
      try {
        const messages = await this.gather();
        if (messages.length > 0) await this.deliver(messages);
      } catch (error) {
        if (!this.running) return;
        this.options.onError?.(error);
        await sleep(200);
      }
    }
  }

  /** One batch: the first receive waits for a message; then the window runs until it closes or the batch is full. */
  private async gather(): Promise<Message[]> {
    const { batchSize, maximumBatchingWindowSeconds } = this.options;
    const messages: Message[] = [];
    let windowEnds: number | undefined;
    while (this.running && messages.length < batchSize) {
      const waitMs = windowEnds === undefined ? 1000 : windowEnds - Date.now();
      if (waitMs <= 0) break;
      // SQS long polls in whole seconds: the window's last fraction is short polls, so it does not overrun.
      const received = await this.receive(Math.min(10, batchSize - messages.length), Math.floor(waitMs / 1000));
      messages.push(...received);
      if (received.length === 0 && waitMs < 1000) await sleep(Math.min(waitMs, 50));
      if (messages.length > 0 && windowEnds === undefined) {
        windowEnds = Date.now() + maximumBatchingWindowSeconds * 1000;
      }
    }
    return messages;
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const { Messages } = await this.options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: Math.min(20, waitSeconds),
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: this.abort.signal },
    );
    return Messages ?? [];
  }

  private async deliver(messages: Message[]): Promise<void> {
    const records = messages.map((m) => toRecord(m, this.options.queueArn, this.options.region));
    const all = new Set(records.map((r) => r.messageId));
    let failed: Set<string>;
    let error: unknown;
    try {
      failed = this.failedIn(await this.options.invoke({ Records: records }), all);
    } catch (thrown) {
      error = thrown;
      failed = all;
    }
    const succeeded = messages.filter((m) => !failed.has(m.MessageId!));
    for (let i = 0; i < succeeded.length; i += 10) {
      await this.options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: succeeded.slice(i, i + 10).map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
    this.options.onBatch?.({ records, failed, ...(error === undefined ? {} : { error }) });
  }

  /** The records SQS keeps, from the function's response (Lambda's rules for partial batch responses). */
  private failedIn(response: unknown, all: ReadonlySet<string>): Set<string> {
    if (!this.options.reportBatchItemFailures) return new Set();
    const failures = (response as SQSBatchResponse | undefined)?.batchItemFailures;
    if (failures === undefined || failures === null || failures.length === 0) return new Set();
    const ids = failures.map((f) => f?.itemIdentifier);
    return ids.every((id) => typeof id === 'string' && all.has(id)) ? new Set(ids) : new Set(all);
  }
}

/** An SDK message as Lambda hands it to the function (attribute names and shapes of the SQS event). */
export function toRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const a = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      // A fair queue's message group: on the record as on a FIFO queue's.
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, lambdaAttribute(value)]),
    ) as SQSMessageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

function lambdaAttribute(value: MessageAttributeValue) {
  return {
    dataType: value.DataType!,
    ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
    ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
    stringListValues: value.StringListValues ?? [],
    binaryListValues: (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
