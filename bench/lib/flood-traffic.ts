import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sqsEvent } from '../../local/lambda-events';
import type { Arrival } from './flood-metrics';

/** The tenant of a bench message id (`tenant#n`). */
export const tenantOf = (messageId: string) => messageId.slice(0, messageId.lastIndexOf('#'));

interface Queued {
  id: string;
  body: string;
}

export interface BatchSettings {
  /** Records per router invocation at most (serverless.yml's batchSize). */
  batchSize: number;
  /** How long a batch gathers before it goes with fewer (serverless.yml's maximumBatchingWindow). */
  windowMs: number;
  /** Router invocations at once at most (the event source's maximumConcurrency). */
  concurrency: number;
}

/**
 * The after-process queue and its event source mapping, in memory: events wait in order, and up
 * to `concurrency` pollers hand the router batches of up to `batchSize`, each gathered for at most
 * `windowMs`. A record the router lists in batchItemFailures (or every record of an invocation
 * that throws) goes back to the end of the queue, as SQS would deliver it again. Records the time
 * each event was first handed to a router.
 */
export class SqsBatches {
  readonly handedAt = new Map<string, number>();
  invocations = 0;
  retried = 0;
  private readonly queue: Queued[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly route: (event: SQSEvent) => Promise<SQSBatchResponse | undefined | unknown>,
    private readonly settings: BatchSettings,
    private readonly failed: (error: unknown) => void,
  ) {}

  send(id: string, body: string): void {
    this.queue.push({ id, body });
  }

  /** Ids not yet handed to a router (or handed back). */
  waiting(): string[] {
    return this.queue.map((q) => q.id);
  }

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.settings.concurrency }, () => this.poll());
  }

  /** Stops polling and waits for the router invocations in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async poll(): Promise<void> {
    while (this.running) {
      if (this.queue.length === 0) {
        await sleep(10);
        continue;
      }
      const windowEnds = Date.now() + this.settings.windowMs;
      while (this.running && this.queue.length < this.settings.batchSize && Date.now() < windowEnds) await sleep(10);
      const batch = this.queue.splice(0, this.settings.batchSize);
      if (batch.length === 0) continue;
      const now = Date.now();
      for (const { id } of batch) if (!this.handedAt.has(id)) this.handedAt.set(id, now);
      const event = sqsEvent(
        batch.map((q) => q.body),
        'fairway-bench-after-process',
      );
      this.invocations++;
      try {
        const response = (await this.route(event)) as SQSBatchResponse | undefined;
        const failedIds = new Set(response?.batchItemFailures?.map((f) => f.itemIdentifier) ?? []);
        const again = batch.filter((_, i) => failedIds.has(event.Records[i]!.messageId));
        this.retried += again.length;
        this.queue.push(...again);
      } catch (error) {
        this.failed(error);
        this.retried += batch.length;
        this.queue.push(...batch);
      }
    }
  }
}

/**
 * Workers at a set rate on one queue: prefetch 50, one ack every 1/rate s. Records every delivery
 * (repeats included) and every ack, by tenant, in ms since `t0`.
 */
export class RateWorkers {
  readonly deliveries: string[] = [];
  readonly firstDelivery = new Map<string, number>();
  readonly acks: Arrival[] = [];
  private channel?: Channel;
  private nextSlot = 0;
  private readonly pending = new Map<NodeJS.Timeout, ConsumeMessage>();

  constructor(
    private readonly model: ChannelModel,
    private readonly queue: string,
    private readonly rate: number,
    private readonly t0: number,
  ) {}

  /** Delivered and not yet acked. */
  held(): number {
    return this.pending.size;
  }

  async start(): Promise<void> {
    const channel = await this.model.createChannel();
    this.channel = channel;
    await channel.prefetch(50);
    await channel.consume(
      this.queue,
      (message) => {
        if (!message) return;
        const id = String(message.properties.messageId);
        this.deliveries.push(id);
        if (!this.firstDelivery.has(id)) this.firstDelivery.set(id, Date.now());
        const now = performance.now();
        const at = Math.max(now, this.nextSlot);
        this.nextSlot = at + 1000 / this.rate;
        const timer = setTimeout(() => {
          this.pending.delete(timer);
          channel.ack(message);
          this.acks.push({ tenant: tenantOf(id), at: Date.now() - this.t0 });
        }, at - now);
        this.pending.set(timer, message);
      },
      { consumerTag: 'bench-workers' },
    );
  }

  /** Stops consuming; what the workers hold counts as processed (it was delivered) and is acked now. */
  async stop(): Promise<void> {
    const channel = this.channel;
    if (!channel) return;
    await channel.cancel('bench-workers').catch(() => undefined);
    for (const [timer, message] of this.pending) {
      clearTimeout(timer);
      channel.ack(message);
    }
    this.pending.clear();
    await channel.close().catch(() => undefined);
  }
}

/** Ready messages in `queue`, or 0 if it does not exist (yet): a missing queue closes the channel, so a new one is opened. */
export class DepthReader {
  private channel?: Promise<Channel>;

  constructor(private readonly model: ChannelModel) {}

  async depth(queue: string): Promise<number> {
    this.channel ??= this.model.createChannel().then((c) => {
      c.on('error', () => undefined);
      return c;
    });
    try {
      return (await (await this.channel).checkQueue(queue)).messageCount;
    } catch {
      this.channel = undefined;
      return 0;
    }
  }

  async close(): Promise<void> {
    await (await this.channel)?.close().catch(() => undefined);
  }
}

/** Takes every message out of `queues` (those that exist) and returns their ids; then deletes the queues. */
export async function drainIds(model: ChannelModel, queues: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const queue of queues) {
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    let count: number;
    try {
      count = (await channel.checkQueue(queue)).messageCount;
    } catch {
      continue; // never declared
    }
    if (count > 0) {
      await channel.prefetch(1000);
      let received = 0;
      let last = Date.now();
      await channel.consume(
        queue,
        (message) => {
          if (!message) return;
          ids.push(String(message.properties.messageId));
          received++;
          last = Date.now();
        },
        { noAck: true, consumerTag: 'bench-drain' },
      );
      while (received < count && Date.now() - last < 5_000) await sleep(20);
      await channel.cancel('bench-drain');
    }
    await channel.deleteQueue(queue);
    await channel.close().catch(() => undefined);
  }
  return ids;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
