import { AmqpSession } from '../../lib/rabbitmq/connection';

/**
 * Staging queues' depths as AMQP gives them (a passive declare): exact at the moment of reading,
 * where the management API's figures are up to its stats interval (~5 s) old.
 */
export class QueueDepths {
  private readonly session: AmqpSession;

  constructor(amqpUrl: string) {
    this.session = new AmqpSession(amqpUrl);
  }

  /** Each queue's messages now; a queue that is gone (reaped since it was listed) holds none. */
  async read(queues: readonly string[]): Promise<ReadonlyMap<string, number>> {
    const depths = new Map<string, number>();
    for (const queue of queues) {
      const channel = await this.session.sharedChannel();
      try {
        depths.set(queue, (await channel.checkQueue(queue)).messageCount);
      } catch (error) {
        // A 404 closes the channel; the shared one is opened again for the next queue.
        if ((error as { code?: number }).code !== 404) throw error;
        depths.set(queue, 0);
      }
    }
    return depths;
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
