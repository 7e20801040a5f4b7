import type { ConfirmChannel } from 'amqplib';
import { ConfirmTracker } from '../../rabbitmq/confirms';
import { channelAnswer, closeWithin } from '../../rabbitmq/connection';

/** Opens a confirm channel on the pass's connection (AmqpSession.openConfirmChannel). */
export type OpenChannel = () => Promise<ConfirmChannel>;

/**
 * The two channels a mover works on: it consumes on one and publishes with confirms on the other,
 * whose publishes and the broker's answers `confirms` tracks for as long as the pair lives.
 */
export interface ChannelPair {
  consumer: ConfirmChannel;
  publisher: ConfirmChannel;
  confirms: ConfirmTracker;
}

/** Opens both channels at once (one round trip, not two); if either fails, closes the other. */
export async function openChannelPair(openChannel: OpenChannel): Promise<ChannelPair> {
  const [consumer, publisher] = await Promise.allSettled([openChannel(), openChannel()]);
  if (consumer.status === 'fulfilled' && publisher.status === 'fulfilled') {
    return { consumer: consumer.value, publisher: publisher.value, confirms: new ConfirmTracker(publisher.value) };
  }
  for (const opened of [consumer, publisher]) if (opened.status === 'fulfilled') await closeWithin(opened.value);
  throw consumer.status === 'rejected' ? consumer.reason : (publisher as PromiseRejectedResult).reason;
}

/** Closing the consuming channel puts back anything still unacked. */
export async function closeChannelPair(pair: ChannelPair): Promise<void> {
  pair.confirms.detach();
  await closeWithin(pair.publisher);
  await closeWithin(pair.consumer);
}

/** What a task on a slot reports back: its value, and whether its channels may serve the next task. */
export interface SlotOutcome<T> {
  value: T;
  reusable: boolean;
}

export interface ChannelSlots {
  /** Runs `task` when a slot is free, on that slot's channel pair (opened on first use, or after a task spoiled it). */
  use<T>(task: (pair: ChannelPair) => Promise<SlotOutcome<T>>): Promise<T>;
  /** Closes every idle pair; call once every task has ended. */
  close(): Promise<void>;
}

/**
 * At most `size` tasks at a time, each on a channel pair kept for the next task of its slot: a
 * mover of a one-message queue is otherwise mostly channel opens and closes (6 of its ~10 round
 * trips). A pair a task could not hand back clean is closed, and the slot opens a new one.
 */
export function channelSlots(size: number, openChannel: OpenChannel): ChannelSlots {
  const limit = concurrencyLimit(size);
  const idle: ChannelPair[] = [];
  return {
    use: (task) =>
      limit(async () => {
        const pair = idle.pop() ?? (await openChannelPair(openChannel));
        let reusable = false;
        try {
          const outcome = await task(pair);
          reusable = outcome.reusable;
          return outcome.value;
        } finally {
          if (reusable) idle.push(pair);
          else await closeChannelPair(pair);
        }
      }),
    close: () => Promise.all(idle.splice(0).map(closeChannelPair)).then(() => undefined),
  };
}

/** Runs tasks with at most `max` of them at a time; tasks wait in the order they were submitted. */
export function concurrencyLimit(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    // A finishing task hands its slot straight to the next waiter, so `active` never overshoots.
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/** Declares a missing target: durable, with the given arguments. */
export async function createQueue(
  openChannel: OpenChannel,
  name: string,
  args: Record<string, unknown>,
): Promise<void> {
  const channel = await openChannel();
  try {
    await channelAnswer(
      channel,
      channel.assertQueue(name, { durable: true, arguments: args }),
      `queue.declare of ${JSON.stringify(name)}`,
    );
  } finally {
    await closeWithin(channel);
  }
}
