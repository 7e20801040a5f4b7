import type { ConfirmChannel, Message, MessageProperties, Options } from 'amqplib';
import type { ConfirmOutcome } from '../../rabbitmq/confirms';
import { channelAnswer } from '../../rabbitmq/connection';
import { brokerError } from '../../rabbitmq/reply-codes';
import { parkingQueueName, takeStagedAt } from '../../staging/staging-names';
import type { ChannelPair } from './channels';
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

/**
 * Which staging deliveries a mover may ack, and with one `multiple` ack for many: an ack frame per
 * message is broker work a mover of thousands can spare (acking in bulk moved ~20 % more messages
 * a second in the bench's raw pump). Pure: the mover sends the frames.
 *
 * A `multiple` ack of tag N acks every delivery up to N still unacked on the channel, so N is
 * handed out only once every tag up to it is settled: confirmed (to ack) or already nacked. A tag
 * whose confirm has not come holds back every tag above it; N itself is always a confirmed tag
 * (RabbitMQ closes the channel on a `multiple` ack of a tag it no longer holds).
 */
export interface AckLedger<T> {
  /** A delivery taken (`value`, its message), in delivery order: the first one fixes where the mover's tags start. */
  delivered(tag: number, value: T): void;
  /** The broker confirmed the publish of `tag`: it is to be acked. */
  confirmed(tag: number): void;
  /** `tag` was nacked (put back) already: it is settled, with nothing to ack. */
  nacked(tag: number): void;
  /** The message to ack with `multiple` now, if the settled run grew over a confirmed tag since the last call. */
  take(): T | undefined;
  /**
   * The mover stops waiting for confirms: the frames that settle every delivery left, in order, each
   * `multiple` up to its message (acks for the confirmed, nacks with requeue for the rest). One frame
   * per run, never an ack per message: a quorum queue applied the first 33 of 144 single acks sent
   * just before the channel closed and put the other 111 back. So a confirmed message behind a
   * missing confirm is acked in bulk once the gap is put back.
   */
  finish(): { ack: boolean; upTo: T }[];
}

/**
 * A ledger for one consumer on a channel that no one else consumes or gets from while it runs,
 * every earlier delivery of the channel settled: its delivery tags then run on without a gap.
 */
export function ackLedger<T>(): AckLedger<T> {
  /** Every tag up to here is settled and acked or nacked on the wire, or handed out by take. */
  let settledUpTo: number | undefined;
  const deliveries = new Map<number, T>();
  /** Settled tags above settledUpTo: true to ack, false already nacked. */
  const settled = new Map<number, boolean>();
  return {
    delivered(tag, value) {
      settledUpTo ??= tag - 1;
      deliveries.set(tag, value);
    },
    confirmed(tag) {
      settled.set(tag, true);
    },
    nacked(tag) {
      settled.set(tag, false);
    },
    take() {
      if (settledUpTo === undefined) return undefined;
      let toAck: T | undefined;
      while (settled.has(settledUpTo + 1)) {
        settledUpTo++;
        if (settled.get(settledUpTo)) toAck = deliveries.get(settledUpTo);
        settled.delete(settledUpTo);
        deliveries.delete(settledUpTo);
      }
      return toAck;
    },
    finish() {
      const frames: { ack: boolean; upTo: T }[] = [];
      for (const [tag, value] of deliveries) {
        settledUpTo = tag;
        const state = settled.get(tag);
        // Already nacked: a multiple frame of either kind passes over it.
        if (state === false) continue;
        const ack = state === true;
        if (frames.at(-1)?.ack === ack) frames.at(-1)!.upTo = value;
        else frames.push({ ack, upTo: value });
      }
      deliveries.clear();
      settled.clear();
      return frames;
    },
  };
}
