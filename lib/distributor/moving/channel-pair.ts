import type { ConfirmChannel } from 'amqplib';
import { ConfirmTracker } from '../../rabbitmq/confirms';
import { closeWithin } from '../../rabbitmq/connection';

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
