import { randomUUID } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { BrokerTimeoutError, errorText } from '../../platform/errors';
import { channelAnswer } from '../../rabbitmq/answer-within';
import type { ConfirmOutcome } from '../../rabbitmq/confirms';
import { waitOf } from '../waits';
import { ackLedger } from './ack-ledger';
import type { ChannelPair } from './channel-pair';
import {
  cleanStops,
  DRAIN_TIMEOUT_MS,
  giveBytes,
  type Moved,
  type MoveRequest,
  type MoveResult,
  nothingMoved,
  refusalError,
  type StopReason,
  stopOnRefusal,
  takeBytes,
  withWaits,
} from './move-request';
import { mustPark, publishMoved } from './publish-moved';

/**
 * Moves up to `count` messages from `source` to the queue `target` with a consumer, without ever
 * losing one: each delivery is published to the target (publish-moved.ts) on the pair's confirm
 * channel, and the staging copy is acked only once the broker confirmed the publish (in bulk, see
 * ack-ledger.ts); a return or a nack puts it back. Publishes are pipelined up to `prefetch`. A
 * crash between confirm and ack leaves a duplicate, never a gap. Never rejects: a failure ends the
 * move with a stop reason and the error. `reusable` as for moveOn (mover.ts).
 */
export async function pump(pair: ChannelPair, request: MoveRequest, now: () => number): Promise<Moved> {
  const { consumer, confirms } = pair;
  const consumerTag = `fairway-distributor-${randomUUID()}`;
  let received = 0;
  let moved = 0;
  let requeued = 0;
  let parked = 0;
  let unconfirmed = 0;
  let work = 0;
  /** The waits in staging of the messages moved, measured when each was delivered. */
  const waitsMs: number[] = [];
  /** Publishes whose outcome has not come (a parked one may still wait for its queue's declare). */
  let awaiting = 0;
  let lastDelivery = now();
  let stopReason: StopReason | undefined;
  let stopError: string | undefined;
  let cancelFailed = false;
  let cancelDone = false;
  let ended = false;
  let stopped: () => void = () => undefined;
  const whenStopped = new Promise<void>((resolve) => (stopped = resolve));
  let cancelled: Promise<void> = Promise.resolve();
  let drained: () => void = () => undefined;

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
  const stop = (reason: StopReason, error?: string) => {
    if (stopReason) return;
    stopReason = reason;
    stopError = error;
    cancelled = consumer
      .cancel(consumerTag)
      .then(
        () => undefined,
        () => {
          cancelFailed = true;
        },
      )
      .finally(() => {
        cancelDone = true;
      });
    stopped();
  };

  const watchdog = setInterval(
    () => {
      const time = now();
      if (time >= request.deadline) stop('deadline');
      else if (time - lastDelivery >= request.idleStopMs) stop('source-drained');
    },
    Math.max(10, Math.min(250, request.idleStopMs / 4)),
  );
  const onConsumerClose = () => stop('channel-closed');
  consumer.on('close', onConsumerClose);

  const outcomeOf = (message: ConsumeMessage, park: boolean, waitMs?: number) => (outcome: ConfirmOutcome) => {
    awaiting--;
    const tag = message.fields.deliveryTag;
    if (outcome.confirmed) {
      if (park) parked++;
      else {
        moved++;
        if (request.workOf) work += request.workOf(message);
        if (waitMs !== undefined) waitsMs.push(waitMs);
      }
      if (ended) settle(() => consumer.ack(message));
      else {
        ledger.confirmed(tag, message);
        queueAcks();
      }
    } else if (outcome.reason === 'timeout') {
      unconfirmed++; // left unacked: closing the consumer puts it back
    } else {
      requeued++;
      giveBytes(request.byteBudget, message.content.length);
      settle(() => consumer.nack(message, false, true));
      ledger.nacked(tag);
      stop(stopOnRefusal(outcome.reason), refusalError(outcome));
    }
    if (awaiting === 0) drained();
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
    if (!takeBytes(request.byteBudget, message.content.length)) {
      settle(() => consumer.nack(message, false, true));
      ledger.nacked(tag);
      return stop('target-full');
    }
    received++;
    lastDelivery = now();
    awaiting++;
    const waitMs = waitOf(message.properties.headers, lastDelivery);
    publishMoved(pair, request, message, outcomeOf(message, mustPark(message, request), waitMs));
    if (received >= request.count) stop('share-moved');
  };

  const finish = () => {
    clearInterval(watchdog);
    consumer.off('close', onConsumerClose);
  };
  try {
    const prefetch = Math.max(1, Math.min(request.prefetch, request.count, 65535));
    await channelAnswer(consumer, consumer.prefetch(prefetch), 'basic.qos');
    await channelAnswer(
      consumer,
      consumer.consume(request.source, onDelivery, { noAck: false, consumerTag }),
      `basic.consume of ${JSON.stringify(request.source)}`,
    );
  } catch (error) {
    finish();
    // A consume of a missing queue is refused (404); one left unanswered puts the channel in doubt.
    const stop = error instanceof BrokerTimeoutError ? 'channel-closed' : 'source-missing';
    return { result: { ...nothingMoved(stop, errorText(error)), parked }, reusable: false };
  }

  await whenStopped;
  // Confirms still owed, and the cancel, get DRAIN_TIMEOUT_MS; a publish still unanswered then stays
  // unacked (the caller closes the consumer, which puts it back).
  const drainedAll = new Promise<void>((resolve) => {
    drained = resolve;
    if (awaiting === 0) resolve();
  });
  await waitAtMost(Promise.all([drainedAll, cancelled]), DRAIN_TIMEOUT_MS);
  await confirms.settledWithin(0);
  unconfirmed += awaiting; // parked publishes whose queue's declare never came back
  // A confirm still missing holds back the bulk ack: the confirmed messages behind it are acked one by one.
  ended = true;
  sendAcks();
  for (const message of ledger.heldBack()) settle(() => consumer.ack(message));
  finish();
  const result: MoveResult = { moved, requeued, parked, stopReason: stopReason! };
  if (stopError !== undefined) result.error = stopError;
  if (unconfirmed > 0) result.unconfirmed = unconfirmed;
  if (request.workOf) result.work = work;
  const clean =
    cleanStops.includes(result.stopReason) && unconfirmed === 0 && cancelDone && !cancelFailed && !confirms.closed;
  return { result: withWaits(result, waitsMs, request), reusable: clean };
}

/** Resolves when `promise` settles or after `ms`, whichever comes first. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
