import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage, Message, MessageProperties, Options } from 'amqplib';
import { parkingQueueName } from '../queues/parking-names';
import { ackLedger } from './ack-ledger';
import { GET_SHARE_MAX, moveByGet } from './get-mover';

/** Opens a confirm channel on the pass's connection (AmqpSession.openConfirmChannel). */
export type OpenChannel = () => Promise<ConfirmChannel>;

export interface MoveRequest {
  source: string;
  target: string;
  /** The queue's share: the mover never takes more deliveries than this. */
  count: number;
  /** Deliveries in flight at most; 1..65535 (0 would mean unlimited to AMQP). */
  prefetch: number;
  /** Epoch ms after which the mover stops taking new deliveries. */
  deadline: number;
  /** Stop when no delivery came for this long (the queue held less than planned). */
  idleStopMs: number;
  /** The RabbitMQ user the distributor publishes as: a message with another `user-id` is parked. */
  publisherUser: string;
}

/** Headers a parked message carries, so that an operator can tell where it came from and why. */
export const parkedHeaders = {
  from: 'x-fairway-parked-from',
  userId: 'x-fairway-parked-user-id',
  reason: 'x-fairway-parked-reason',
} as const;

export type StopReason =
  | 'share-moved'
  | 'source-drained'
  | 'source-missing'
  | 'target-missing'
  | 'target-rejected'
  | 'deadline'
  | 'channel-closed';

export interface MoveResult {
  /** Published, confirmed by the broker, then acked in the staging queue. */
  moved: number;
  /** Published but returned or nacked by the broker: put back in the staging queue. */
  requeued: number;
  /** Moved to the target's parking queue instead (`parkingQueueName`): the broker would refuse them. */
  parked: number;
  stopReason: StopReason;
  /**
   * Published, but no confirm came within DRAIN_TIMEOUT_MS of stopping: the staging copies go
   * back when the channel closes, and may also have reached the target (duplicates, never losses).
   */
  unconfirmed?: number;
  error?: string;
}

/** After stopping, how long to wait for outstanding confirms before giving up on them. */
export const DRAIN_TIMEOUT_MS = 5_000;
/** A channel close that gets no answer (a broker half gone) must not hold the pass. */
const CLOSE_TIMEOUT_MS = 2_000;

interface InFlight {
  message: ConsumeMessage;
  returned: boolean;
}

/**
 * Moves up to `count` messages from `source` to the queue `target` without ever losing one:
 * each delivery is published to the target (default exchange, `mandatory`, every property kept)
 * on a confirm channel, and the staging copy is acked only once the broker confirmed the
 * publish (in bulk, see ack-ledger.ts); a return or a nack puts it back. Publishes are
 * pipelined up to `prefetch`.
 * A crash between confirm and ack leaves a duplicate, never a gap. Never rejects: a failure
 * ends the move with a stop reason and the error, so the pass holds its lease until every
 * mover of the target has ended.
 */
export async function moveMessages(
  openChannel: OpenChannel,
  request: MoveRequest,
  now: () => number = Date.now,
): Promise<MoveResult> {
  if (request.count <= 0) return { moved: 0, requeued: 0, parked: 0, stopReason: 'share-moved' };
  let pair: ChannelPair | undefined;
  try {
    pair = await openChannelPair(openChannel);
    return (await moveOn(pair, request, now)).result;
  } catch (error) {
    return { moved: 0, requeued: 0, parked: 0, stopReason: 'channel-closed', error: (error as Error).message };
  } finally {
    if (pair) await closeChannelPair(pair);
  }
}

/** The two channels a mover works on: it consumes on one and publishes with confirms on the other. */
export interface ChannelPair {
  consumer: ConfirmChannel;
  publisher: ConfirmChannel;
}

/** Opens both channels at once (one round trip, not two); if either fails, closes the other. */
export async function openChannelPair(openChannel: OpenChannel): Promise<ChannelPair> {
  const [consumer, publisher] = await Promise.allSettled([openChannel(), openChannel()]);
  if (consumer.status === 'fulfilled' && publisher.status === 'fulfilled') {
    return { consumer: consumer.value, publisher: publisher.value };
  }
  for (const opened of [consumer, publisher]) if (opened.status === 'fulfilled') await closeQuietly(opened.value);
  throw consumer.status === 'rejected' ? consumer.reason : (publisher as PromiseRejectedResult).reason;
}

/** Closing the consuming channel puts back anything still unacked. */
export async function closeChannelPair(pair: ChannelPair): Promise<void> {
  await closeQuietly(pair.publisher);
  await closeQuietly(pair.consumer);
}

/**
 * Moves on channels the caller owns (a channel pair per concurrency slot saves two opens and
 * two closes per staging queue). `reusable` is true only when the move left both channels as it
 * found them: open, the consumer cancelled, every delivery acked or put back, no confirm owed.
 * Otherwise the caller closes them, which puts back whatever is still unacked.
 */
export async function moveOn(
  pair: ChannelPair,
  request: MoveRequest,
  now: () => number = Date.now,
): Promise<{ result: MoveResult; reusable: boolean }> {
  if (request.count <= 0) {
    return { result: { moved: 0, requeued: 0, parked: 0, stopReason: 'share-moved' }, reusable: true };
  }
  if (request.count <= GET_SHARE_MAX) return moveByGet(pair.consumer, pair.publisher, request, now);
  return pump(pair.consumer, pair.publisher, request, now);
}

async function closeQuietly(channel: ConfirmChannel): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    channel.close().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

/** Stops that leave both channels usable, once nothing is in flight and the consumer is cancelled. */
const cleanStops: readonly StopReason[] = ['share-moved', 'source-drained', 'deadline'];

async function pump(
  consumer: ConfirmChannel,
  publisher: ConfirmChannel,
  request: MoveRequest,
  now: () => number,
): Promise<{ result: MoveResult; reusable: boolean }> {
  const consumerTag = `fairway-distributor-${randomUUID()}`;
  const inFlight = new Set<InFlight>();
  let received = 0;
  let moved = 0;
  let requeued = 0;
  let parked = 0;
  let lastDelivery = now();
  let stopReason: StopReason | undefined;
  let cancelled = false;
  let cancelFailed = false;
  let finish: (result: MoveResult) => void = () => undefined;
  const done = new Promise<MoveResult>((resolve) => (finish = resolve));

  const settle = (action: () => void) => {
    try {
      action();
    } catch {
      // The channel is closed: the broker puts the unacked delivery back itself.
    }
  };
  // Staging copies are acked in bulk (one `multiple` ack per burst of confirms), never ahead of a confirm.
  const ledger = ackLedger<ConsumeMessage>();
  let acksQueued = false;
  const sendAcks = () => {
    acksQueued = false;
    const upTo = ledger.take();
    if (upTo) settle(() => consumer.ack(upTo, true));
  };
  const queueAcks = () => {
    if (acksQueued) return;
    acksQueued = true;
    queueMicrotask(sendAcks);
  };
  let drainTimer: NodeJS.Timeout | undefined;
  let ended = false;
  const end = () => {
    // A confirm still missing (the drain timed out) holds back the bulk ack: the confirmed
    // messages behind it, and any confirmed later, are acked one by one.
    ended = true;
    sendAcks();
    for (const message of ledger.heldBack()) settle(() => consumer.ack(message));
    clearInterval(watchdog);
    clearTimeout(drainTimer);
    const result: MoveResult = { moved, requeued, parked, stopReason: stopReason! };
    if (inFlight.size > 0) result.unconfirmed = inFlight.size;
    finish(result);
  };
  const maybeFinish = () => {
    if (stopReason && cancelled && inFlight.size === 0) end();
  };
  const stop = (reason: StopReason) => {
    if (stopReason) return;
    stopReason = reason;
    drainTimer = setTimeout(end, DRAIN_TIMEOUT_MS);
    consumer
      .cancel(consumerTag)
      .catch(() => {
        cancelFailed = true;
      })
      .finally(() => {
        cancelled = true;
        maybeFinish();
      });
  };

  const watchdog = setInterval(
    () => {
      const time = now();
      if (time >= request.deadline) stop('deadline');
      else if (time - lastDelivery >= request.idleStopMs) stop('source-drained');
    },
    Math.max(10, Math.min(250, request.idleStopMs / 4)),
  );

  const onReturn = (returned: { content: Buffer }) => {
    // A return precedes the confirm of the same message; identical in-flight copies are interchangeable.
    for (const entry of inFlight) {
      if (!entry.returned && entry.message.content.equals(returned.content)) {
        entry.returned = true;
        break;
      }
    }
    stop('target-missing');
  };
  const onClose = () => stop('channel-closed');
  publisher.on('return', onReturn);
  // Ahead of amqplib's own listener, which fails every pending confirm: those failures then find the move stopped.
  publisher.prependListener('close', onClose);
  consumer.on('close', onClose);
  const detach = () => {
    publisher.off('return', onReturn);
    publisher.off('close', onClose);
    consumer.off('close', onClose);
  };

  const onDelivery = (message: ConsumeMessage | null) => {
    if (message === null) return stop('source-missing'); // the broker cancelled us: the queue was deleted
    const tag = message.fields.deliveryTag;
    ledger.delivered(tag);
    if (now() >= request.deadline) stop('deadline');
    if (stopReason || received >= request.count) {
      settle(() => consumer.nack(message, false, true)); // arrived after we stopped: put it back
      ledger.nacked(tag);
      return;
    }
    received++;
    lastDelivery = now();
    const entry: InFlight = { message, returned: false };
    inFlight.add(entry);
    const confirmed = (park: boolean) => (error: unknown) => {
      inFlight.delete(entry);
      if (error || entry.returned) {
        requeued++;
        settle(() => consumer.nack(message, false, true));
        ledger.nacked(tag);
        // A nack; a closed channel has already stopped the move as 'channel-closed'.
        if (error) stop('target-rejected');
      } else {
        if (park) parked++;
        else moved++;
        if (ended) settle(() => consumer.ack(message));
        else {
          ledger.confirmed(tag, message);
          queueAcks();
        }
      }
      maybeFinish();
    };
    publishMoved(publisher, request, message, confirmed(mustPark(message, request)));
    if (received >= request.count) stop('share-moved');
  };

  try {
    await consumer.prefetch(Math.max(1, Math.min(request.prefetch, request.count, 65535)));
    await consumer.consume(request.source, onDelivery, { noAck: false, consumerTag });
  } catch (error) {
    clearInterval(watchdog);
    clearTimeout(drainTimer);
    detach();
    return {
      result: { moved: 0, requeued: 0, parked, stopReason: 'source-missing', error: (error as Error).message },
      reusable: false,
    };
  }
  const result = await done;
  detach();
  const reusable =
    cleanStops.includes(result.stopReason) && result.unconfirmed === undefined && cancelled && !cancelFailed;
  return { result, reusable };
}

/** A message the broker would refuse to take from the distributor: another user's `user-id`. */
export function mustPark(message: Message, request: MoveRequest): boolean {
  const { userId } = message.properties;
  return userId !== undefined && userId !== request.publisherUser;
}

/** Parking queues declared on a channel, so each is declared once per channel. */
const declaredParking = new WeakMap<ConfirmChannel, Map<string, Promise<unknown>>>();

/**
 * Publishes a moved message to its target (mandatory, every property kept), or to the target's
 * parking queue when the broker would refuse it (`mustPark`): RabbitMQ would close the channel on
 * such a publish, pass after pass. `confirmed` gets the broker's answer, or the declare's failure.
 */
export function publishMoved(
  publisher: ConfirmChannel,
  request: MoveRequest,
  message: Message,
  confirmed: (error: unknown) => void,
): void {
  if (!mustPark(message, request)) {
    publisher.publish('', request.target, message.content, publishOptions(message.properties), confirmed);
    return;
  }
  const queue = parkingQueueName(request.target);
  const declared = declaredParking.get(publisher) ?? new Map<string, Promise<unknown>>();
  declaredParking.set(publisher, declared);
  if (!declared.has(queue)) declared.set(queue, publisher.assertQueue(queue, { durable: true }));
  declared
    .get(queue)!
    .then(
      () => publisher.publish('', queue, message.content, parkedOptions(message.properties, request.source), confirmed),
      confirmed,
    );
}

/** A parked copy: every property but `user-id`, which is kept in a header with where it came from. */
function parkedOptions(p: MessageProperties, source: string): Options.Publish {
  const { userId, ...options } = publishOptions(p);
  return {
    ...options,
    headers: {
      ...p.headers,
      [parkedHeaders.from]: source,
      [parkedHeaders.userId]: userId,
      [parkedHeaders.reason]: "user-id is not the distributor's RabbitMQ user; the broker would refuse it",
    },
  };
}

/** Every property the staging copy carries, for the target copy. */
export function publishOptions(p: MessageProperties): Options.Publish {
  return {
    mandatory: true,
    contentType: p.contentType,
    contentEncoding: p.contentEncoding,
    headers: p.headers,
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
