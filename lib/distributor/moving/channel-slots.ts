import { type ChannelPair, closeChannelPair, type OpenChannel, openChannelPair } from './channel-pair';
import { concurrencyLimit } from './concurrency';

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
