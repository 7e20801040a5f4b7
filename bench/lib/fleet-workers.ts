import type { Channel, ChannelModel } from 'amqplib';

/**
 * Workers on one target at a fixed rate: prefetch 50, one ack every 1/rate s, as a worker that
 * takes 1/rate s a message. Records each message's first delivery time by id, and how many
 * messages the workers hold (delivered, not yet acked): 0 is a worker with nothing to do.
 */
export class TargetWorkers {
  readonly arrived = new Map<string, number>();
  acked = 0;
  private held = 0;
  private channel?: Channel;
  private nextSlot = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly model: ChannelModel,
    readonly queue: string,
    private readonly rate: number,
  ) {}

  inHand(): number {
    return this.held;
  }

  async start() {
    const channel = await this.model.createChannel();
    this.channel = channel;
    await channel.prefetch(50);
    await channel.consume(this.queue, (message) => {
      if (!message) return;
      this.held++;
      const id = String(message.properties.messageId);
      if (!this.arrived.has(id)) this.arrived.set(id, Date.now());
      const now = performance.now();
      const at = Math.max(now, this.nextSlot);
      this.nextSlot = at + 1000 / this.rate;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        channel.ack(message);
        this.held--;
        this.acked++;
      }, at - now);
      this.timers.add(timer);
    });
  }

  async stop() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.channel?.close().catch(() => undefined);
  }
}
