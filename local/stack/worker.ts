import type { Channel, ConsumeMessage } from 'amqplib';
import { AmqpSession } from '../../lib/rabbitmq/connection';

/**
 * A document worker on a target queue: takes up to `perSecond` messages a second and counts them
 * per tenant and per priority, so the view shows who is served. It reconnects after the broker
 * closed its connection (a restart), as a real worker would; unacked messages are redelivered.
 */
export class SimulatedWorker {
  readonly processed = new Map<string, number>();
  readonly byPriority = new Map<number, number>();
  private readonly session: AmqpSession;
  private channel?: Promise<Channel | undefined>;
  private timer?: NodeJS.Timeout;
  private held: ConsumeMessage[] = [];

  constructor(
    amqpUrl: string,
    private readonly queue: string,
    private readonly perSecond: number,
    private readonly tickMs = 100,
  ) {
    this.session = new AmqpSession(amqpUrl);
  }

  start(): void {
    this.timer = setInterval(() => void this.work(), this.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.session.close();
  }

  private open(): Promise<Channel | undefined> {
    this.channel ??= (async () => {
      const channel = await (await this.session.connection()).createChannel();
      channel.on('error', () => undefined);
      channel.on('close', () => {
        this.channel = undefined;
        this.held = [];
      });
      // A prefetch of one tick's work keeps the rest in the queue, where priorities order them.
      await channel.prefetch(Math.max(1, Math.ceil((this.perSecond * this.tickMs) / 1000)));
      await channel.consume(this.queue, (message) => message && this.held.push(message), {
        consumerTag: `fairway-demo-worker`,
      });
      return channel;
    })().catch(() => (this.channel = undefined));
    return this.channel;
  }

  private async work(): Promise<void> {
    const channel = await this.open();
    if (!channel) return;
    for (const message of this.held.splice(0)) {
      try {
        channel.ack(message);
      } catch {
        return; // the channel closed under us; the broker redelivers what was not acked
      }
      const tenant = tenantOf(message);
      this.processed.set(tenant, (this.processed.get(tenant) ?? 0) + 1);
      const priority = message.properties.priority ?? 0;
      this.byPriority.set(priority, (this.byPriority.get(priority) ?? 0) + 1);
    }
  }
}

function tenantOf(message: ConsumeMessage): string {
  try {
    return String((JSON.parse(message.content.toString()) as { tenant?: unknown }).tenant ?? '(unknown)');
  } catch {
    return '(not JSON)';
  }
}
