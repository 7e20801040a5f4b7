import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sqsEvent } from '../../local/lambda-events';
import { messageGroupId } from '../../local/sqs/message-group';
import type { Arrival, Delivery } from './flood-metrics';

/** The tenant of a bench message id (`tenant#n`). */
export const tenantOf = (messageId: string) => messageId.slice(0, messageId.lastIndexOf('#'));

interface Queued {
  id: string;
  body: string;
  /** The message group Fairway's producers give it (the tenant); none: a group of its own. */
  group: string;
}

export interface BatchSettings {
  /** Records per router invocation at most (serverless.yml's batchSize). */
  batchSize: number;
  /** How long a batch gathers before it goes with fewer (serverless.yml's maximumBatchingWindow). */
  windowMs: number;
  /** Router invocations at once at most (the event source's maximumConcurrency). */
  concurrency: number;
  /**
   * `fifo` (default): a standard queue, in order across tenants. `fair`: a fair queue at its best,
   * each batch taken round-robin over the message groups (SQS's own favours quiet tenants only
   * while one holds a large share of the messages in flight: this is the most it could do).
   */
  ingress?: 'fifo' | 'fair';
}

/**
 * The after-process queue and its event source mapping, in memory: events wait in order (or, with
 * `ingress: 'fair'`, by message group in turn), and up
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
    this.queue.push({ id, body, group: messageGroupId(body) ?? id });
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

  private take(size: number): Queued[] {
    if (this.settings.ingress !== 'fair') return this.queue.splice(0, size);
    const groups = new Map<string, Queued[]>();
    for (const queued of this.queue) {
      const group = groups.get(queued.group);
      if (group) group.push(queued);
      else groups.set(queued.group, [queued]);
    }
    const batch: Queued[] = [];
    for (let turn = 0; batch.length < size && batch.length < this.queue.length; turn++)
      for (const group of groups.values()) if (group[turn] && batch.length < size) batch.push(group[turn]!);
    const taken = new Set(batch);
    let kept = 0;
    for (const queued of this.queue) if (!taken.has(queued)) this.queue[kept++] = queued;
    this.queue.length = kept;
    return batch;
  }

  private async poll(): Promise<void> {
    while (this.running) {
      if (this.queue.length === 0) {
        await sleep(10);
        continue;
      }
      const windowEnds = Date.now() + this.settings.windowMs;
      while (this.running && this.queue.length < this.settings.batchSize && Date.now() < windowEnds) await sleep(10);
      const batch = this.take(this.settings.batchSize);
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

/** A message a worker holds: delivered, not yet acked. */
interface Held {
  channel: Channel;
  message: ConsumeMessage;
  delivery: Delivery;
  /** When the worker starts it (Date.now ms): a consumer starts its messages one at a time, in delivery order. */
  startsAt: number;
}

/**
 * Workers at a set rate on one queue: `consumers` channels of `prefetch` each, each consumer one
 * message at a time at `rate / consumers` msg/s (a message starts when it arrives or when the
 * consumer's previous one is done, and is acked when done). Records every delivery (repeats
 * included; when stopped, whether each was started), when each message first started, and every
 * ack, by tenant, in ms since `t0`.
 */
export class RateWorkers {
  readonly deliveries: Delivery[] = [];
  /** When a worker first started each message (not its arrival in the consumer's prefetch buffer). */
  readonly firstStart = new Map<string, number>();
  /** When each message first reached a worker's prefetch buffer: start − arrival is the workers' own wait. */
  readonly firstArrival = new Map<string, number>();
  readonly acks: Arrival[] = [];
  private readonly channels: Channel[] = [];
  private readonly pending = new Map<NodeJS.Timeout, Held>();

  constructor(
    private readonly model: ChannelModel,
    private readonly queue: string,
    private readonly rate: number,
    private readonly t0: number,
    private readonly shape: { consumers: number; prefetch: number } = { consumers: 1, prefetch: 50 },
  ) {}

  /** Delivered and not yet acked. */
  held(): number {
    return this.pending.size;
  }

  async start(): Promise<void> {
    const perMessageMs = (1000 * this.shape.consumers) / this.rate;
    for (let i = 0; i < this.shape.consumers; i++) {
      const channel = await this.model.createChannel();
      this.channels.push(channel);
      await channel.prefetch(this.shape.prefetch);
      let free = 0;
      await channel.consume(
        this.queue,
        (message) => {
          if (!message) return;
          const id = String(message.properties.messageId);
          const delivery = { id, started: true };
          this.deliveries.push(delivery);
          const now = performance.now();
          const startsAt = Math.max(now, free);
          free = startsAt + perMessageMs;
          const startedAt = Date.now() + (startsAt - now);
          if (!this.firstStart.has(id)) {
            this.firstStart.set(id, startedAt);
            this.firstArrival.set(id, Date.now());
          }
          const timer = setTimeout(() => {
            this.pending.delete(timer);
            channel.ack(message);
            this.acks.push({ tenant: tenantOf(id), at: Date.now() - this.t0 });
          }, free - now);
          this.pending.set(timer, { channel, message, delivery, startsAt: startedAt });
        },
        { consumerTag: `bench-workers-${i}` },
      );
    }
  }

  /**
   * Stops consuming as a worker stops: what it has started counts as processed and is acked now;
   * what it holds unstarted goes back to the queue, marked not started. One `multiple` ack and one
   * `multiple` nack per channel: of single acks sent just before the channel closed, a quorum queue
   * applied the first 34 and put the rest back (measured on 3.10 and 4.0.5), so acking a full
   * prefetch of 50 one by one put 16 back that the bench had counted as processed.
   */
  async stop(): Promise<void> {
    for (const [i, channel] of this.channels.entries())
      await channel.cancel(`bench-workers-${i}`).catch(() => undefined);
    const now = Date.now();
    const byChannel = new Map<Channel, { started?: Held; unstarted?: Held }>();
    for (const [timer, held] of this.pending) {
      clearTimeout(timer);
      // In delivery order: the started ones come first, and every earlier delivery is acked already.
      const last = byChannel.get(held.channel) ?? {};
      if (held.startsAt <= now) last.started = held;
      else {
        last.unstarted = held;
        held.delivery.started = false;
        if (this.firstStart.get(held.delivery.id) === held.startsAt) {
          this.firstStart.delete(held.delivery.id);
          this.firstArrival.delete(held.delivery.id);
        }
      }
      byChannel.set(held.channel, last);
    }
    this.pending.clear();
    for (const [channel, { started, unstarted }] of byChannel) {
      if (started) channel.ack(started.message, true);
      if (unstarted) channel.nack(unstarted.message, true, true);
    }
    for (const channel of this.channels) await channel.close().catch(() => undefined);
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
