import type { ConfirmChannel, Message, MessageProperties, Options } from 'amqplib';
import { channelAnswer } from '../../rabbitmq/answer-within';
import { brokerError } from '../../rabbitmq/broker-error';
import type { ConfirmOutcome } from '../../rabbitmq/confirms';
import { parkingQueueName } from '../../staging/side-queues';
import { takeStagedAt } from '../../staging/staged-at';
import type { ChannelPair } from './channel-pair';
import type { MoveRequest } from './move-request';

/** Headers a parked message carries, so that an operator can tell where it came from and why. */
export const parkedHeaders = {
  from: 'x-fairway-parked-from',
  userId: 'x-fairway-parked-user-id',
  reason: 'x-fairway-parked-reason',
} as const;

/** A message the broker would refuse to take from the distributor: another user's `user-id`. */
export function mustPark(message: Message, request: MoveRequest): boolean {
  const { userId } = message.properties;
  return userId !== undefined && userId !== request.publisherUser;
}

/** Parking queues declared on a channel, so each is declared once per channel. */
const declaredParking = new WeakMap<ConfirmChannel, Map<string, Promise<unknown>>>();

/**
 * Publishes a moved message to its target (mandatory, every property kept) through the pair's
 * confirm tracker, or to the target's parking queue when the broker would refuse it (`mustPark`):
 * RabbitMQ would close the channel on such a publish, pass after pass. `settled` gets the broker's
 * answer, or the parking declare's failure (as `unsent`).
 */
export function publishMoved(
  pair: Pick<ChannelPair, 'publisher' | 'confirms'>,
  request: MoveRequest,
  message: Message,
  settled: (outcome: ConfirmOutcome) => void,
): void {
  if (!mustPark(message, request)) {
    const options = publishOptions(message.properties);
    if (request.priority !== undefined) options.priority = request.priority;
    const publication = { queue: request.target, body: message.content, options };
    pair.confirms.publish(publication, settled);
    return;
  }
  const queue = parkingQueueName(request.target);
  const declared = declaredParking.get(pair.publisher) ?? new Map<string, Promise<unknown>>();
  declaredParking.set(pair.publisher, declared);
  if (!declared.has(queue))
    declared.set(
      queue,
      channelAnswer(
        pair.publisher,
        pair.publisher.assertQueue(queue, { durable: true }),
        `queue.declare of ${JSON.stringify(queue)}`,
      ),
    );
  declared.get(queue)!.then(
    () =>
      pair.confirms.publish(
        { queue, body: message.content, options: parkedOptions(message.properties, request.source) },
        settled,
      ),
    (error: unknown) =>
      settled({ confirmed: false, reason: 'unsent', error: brokerError(`could not declare ${queue}`, error) }),
  );
}

/** A parked copy: every property but `user-id`, which is kept in a header with where it came from. */
function parkedOptions(p: MessageProperties, source: string): Options.Publish {
  const { userId, ...options } = publishOptions(p);
  return {
    ...options,
    headers: {
      ...options.headers,
      [parkedHeaders.from]: source,
      [parkedHeaders.userId]: userId,
      [parkedHeaders.reason]: "user-id is not the distributor's RabbitMQ user; the broker would refuse it",
    },
  };
}

/** Every property the staging copy carries, for the target copy; the router's staged-at stamp is taken off. */
export function publishOptions(p: MessageProperties): Options.Publish {
  return {
    mandatory: true,
    contentType: p.contentType,
    contentEncoding: p.contentEncoding,
    headers: takeStagedAt(p.headers).headers,
    deliveryMode: p.deliveryMode,
    priority: p.priority,
    correlationId: p.correlationId,
    replyTo: p.replyTo,
    expiration: p.expiration,
    messageId: p.messageId,
    timestamp: p.timestamp,
    type: p.type,
    userId: p.userId,
    appId: p.appId,
  };
}
