import type { ConfirmChannel } from 'amqplib';
import type { OpenChannel } from './mover';

/**
 * Exact ready counts over AMQP (a passive declare per queue), unlike the management listing
 * whose counts lag about 5 s. Undefined for a queue that does not exist.
 */
export async function readyCounts(
  openChannel: OpenChannel,
  names: readonly string[],
): Promise<Map<string, number | undefined>> {
  const counts = new Map<string, number | undefined>();
  let channel: ConfirmChannel | undefined;
  try {
    for (const name of names) {
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
