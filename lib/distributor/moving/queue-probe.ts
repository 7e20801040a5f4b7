import { channelAnswer, closeWithin } from '../../rabbitmq/connection';
import type { OpenChannel } from './channel-pair';

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
