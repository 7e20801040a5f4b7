import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';

/**
 * A document worker on a target queue: takes messages as fast as `perSecond` allows and counts
 * them per tenant and per priority, so the view shows who is served first.
 */
export class SimulatedWorker {
  readonly processed = new Map<string, number>();
  readonly byPriority = new Map<number, number>();
  private channel?: Channel;
  private timer?: NodeJS.Timeout;
  private held: ConsumeMessage[] = [];

  constructor(
    private readonly queue: string,
    private readonly perSecond: number,
    private readonly tickMs = 100,
  ) {}

  async start(connection: ChannelModel): Promise<void> {
    this.channel = await connection.createChannel();
    this.channel.on('error', () => undefined);
    // A small prefetch keeps the rest in the queue, where priorities order them.
    await this.channel.prefetch(Math.max(1, Math.ceil((this.perSecond * this.tickMs) / 1000)));
    await this.channel.consume(this.queue, (message) => message && this.held.push(message), {
      consumerTag: `fairway-demo-worker-${this.queue}`,
    });
    this.timer = setInterval(() => this.work(), this.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.channel?.close().catch(() => undefined);
  }

  private work(): void {
    for (const message of this.held.splice(0)) {
      const tenant = tenantOf(message);
      this.processed.set(tenant, (this.processed.get(tenant) ?? 0) + 1);
      const priority = message.properties.priority ?? 0;
      this.byPriority.set(priority, (this.byPriority.get(priority) ?? 0) + 1);
      this.channel?.ack(message);
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
