import type { Channel } from 'amqplib';
import { channelAnswer, closeWithin } from '../rabbitmq/connection';
import { MAX_QUEUE_NAME_BYTES, parseStagingQueueName } from './staging-names';

/**
 * A target's doorbell (docs/distributor.md "Target buffer"): the router rings it with a staging
 * queue's name when it declares the queue, and an execution refilling the target reads it each
 * refill, so a queue that appeared mid-stint is served at the next refill rather than the next
 * round. Hints only: a lost or dropped ring costs that delay, never a message (the registry and
 * the work board still name the queue).
 */
export const doorbellName = (target: string): string | undefined => {
  const name = `fairway-doorbell:${target}`;
  // Too long to declare: that target has no doorbell, and new queues wait for the next round.
  return Buffer.byteLength(name, 'utf8') <= MAX_QUEUE_NAME_BYTES ? name : undefined;
};

/**
 * Declared by the execution when it starts refilling the target; it lapses a minute after the
 * last read. Classic and small: rings lapse after 30 s, the oldest go first past 1,000.
 */
export const DOORBELL_OPTIONS = {
  durable: true,
  exclusive: false,
  autoDelete: false,
  arguments: { 'x-queue-type': 'classic', 'x-expires': 60_000, 'x-message-ttl': 30_000, 'x-max-length': 1_000 },
} as const;

/** Rings at most this many a read: a flood of new queues is learned over a few refills. */
const READ_AT_MOST = 100;

/**
 * The router's ring: a transient publish on the default exchange, unconfirmed and not mandatory.
 * With no execution refilling the target there is no doorbell, and the broker drops the ring.
 */
export function ringDoorbell(channel: Pick<Channel, 'sendToQueue'>, target: string, staging: string): void {
  const doorbell = doorbellName(target);
  if (doorbell) channel.sendToQueue(doorbell, Buffer.from(staging, 'utf8'));
}

/** The execution's side: declares the target's doorbell on a channel of its own, then reads it. */
export async function openDoorbell(channel: Channel, target: string): Promise<Doorbell | undefined> {
  const doorbell = doorbellName(target);
  if (!doorbell) return undefined;
  await channelAnswer(channel, channel.assertQueue(doorbell, DOORBELL_OPTIONS), `queue.declare of ${doorbell}`);
  return new Doorbell(channel, doorbell, target);
}

export class Doorbell {
  constructor(
    private readonly channel: Channel,
    private readonly name: string,
    private readonly target: string,
  ) {}

  /** The staging queues of the target rung since the last read (one basic.get each, one more for the empty answer). */
  async rung(): Promise<string[]> {
    const names = new Set<string>();
    for (let i = 0; i < READ_AT_MOST; i++) {
      const got = await channelAnswer(
        this.channel,
        this.channel.get(this.name, { noAck: true }),
        `basic.get of ${this.name}`,
      );
      if (got === false) break;
      const staging = got.content.toString('utf8');
      // Anyone who may publish could ring: only a staging queue of this target is taken.
      if (parseStagingQueueName(staging)?.target === this.target) names.add(staging);
    }
    return [...names];
  }

  async close(): Promise<void> {
    await closeWithin(this.channel);
  }
}
