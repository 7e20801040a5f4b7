import type { ConfirmChannel } from 'amqplib';
import type { OpenChannel } from './mover';

/** Channels reading depths at once: enough to hide the round trip, few enough for the broker. */
export const DEPTH_READ_CHANNELS = 8;
/** Depth reads per channel before another channel is worth opening (opening costs two round trips). */
const READS_PER_CHANNEL = 16;

/**
 * Exact ready counts over AMQP (a passive declare per queue), unlike the management listing
 * whose counts lag about 5 s. Undefined for a queue that does not exist. The reads run on up to
 * `channels` channels at once (a channel takes one declare at a time, so one channel would pay a
 * full round trip per queue).
 */
export async function readyCounts(
  openChannel: OpenChannel,
  names: readonly string[],
  channels = DEPTH_READ_CHANNELS,
): Promise<Map<string, number | undefined>> {
  const counts = new Map<string, number | undefined>();
  let next = 0;
  const reader = async () => {
    let channel: ConfirmChannel | undefined;
    try {
      for (let i = next++; i < names.length; i = next++) {
        const name = names[i]!;
        channel ??= await openChannel();
        try {
          counts.set(name, (await channel.checkQueue(name)).messageCount);
        } catch {
          // A missing queue closes the channel (404): note it and go on with a fresh channel.
          counts.set(name, undefined);
          await channel.close().catch(() => undefined);
          channel = undefined;
        }
      }
    } finally {
      await channel?.close().catch(() => undefined);
    }
  };
  const readers = Math.max(1, Math.min(channels, Math.ceil(names.length / READS_PER_CHANNEL)));
  await Promise.all(Array.from({ length: readers }, reader));
  return counts;
}

/** Declares a missing target: durable, with the given arguments. */
export async function createQueue(
  openChannel: OpenChannel,
  name: string,
  args: Record<string, unknown>,
): Promise<void> {
  const channel = await openChannel();
  try {
    await channel.assertQueue(name, { durable: true, arguments: args });
  } finally {
    await channel.close().catch(() => undefined);
  }
}
