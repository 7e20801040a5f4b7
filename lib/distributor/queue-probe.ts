import type { ConfirmChannel } from 'amqplib';
import { BrokerError } from '../errors';
import type { OpenChannel } from './mover';

/** The AMQP reply code of a passive declare on a queue that does not exist. */
const NOT_FOUND = 404;

/** amqplib's channel errors carry the broker's reply code as `code`; Fairway's carry it typed. */
function asBrokerError(error: unknown, queue: string): BrokerError {
  if (error instanceof BrokerError) return error;
  const code = (error as { code?: unknown }).code;
  return new BrokerError(`Could not read the depth of ${queue}`, {
    cause: error,
    replyCode: typeof code === 'number' ? code : undefined,
  });
}

/**
 * Exact ready counts over AMQP (a passive declare per queue), unlike the management listing
 * whose counts lag about 5 s. Undefined for a queue that does not exist; any other failure
 * rejects with a BrokerError.
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
      } catch (error) {
        // Any refusal closes the channel: go on with a fresh one, or not at all.
        await channel.close().catch(() => undefined);
        channel = undefined;
        const failure = asBrokerError(error, name);
        if (failure.replyCode !== NOT_FOUND) throw failure;
        counts.set(name, undefined);
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
