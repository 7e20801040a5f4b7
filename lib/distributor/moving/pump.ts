import { randomUUID } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { BrokerTimeoutError, errorText } from '../../platform/errors';
import type { ConfirmOutcome } from '../../rabbitmq/confirms';
import { channelAnswer } from '../../rabbitmq/connection';
import { waitOf } from '../waits';
import type { ChannelPair } from './channels';
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
import { ackLedger, mustPark, publishMoved } from './publish-moved';

/** One pump's state, shared by its steps and its consumer's callbacks. */
interface PumpRun {
  pair: ChannelPair;
  request: MoveRequest;
  now: () => number;
  consumerTag: string;
  counts: { received: number; moved: number; requeued: number; parked: number; unconfirmed: number };
  /** The waits in staging of the messages moved, measured when each was delivered. */
  waitsMs: number[];
  /** With `request.workOf`: the work of the messages moved. */
  work: number;
  /** Publishes whose outcome has not come (a parked one may still wait for its queue's declare). */
  awaiting: number;
  lastDelivery: number;
  stopReason?: StopReason;
  stopError?: string;
  cancel: { done: boolean; failed: boolean; settled: Promise<void> };
  /** Set once the consumer stopped and the wait for owed confirms ended: every delivery is settled, a late answer ignored. */
  ended: boolean;
  stopped: () => void;
  drained: () => void;
  // Staging copies are acked in bulk (one `multiple` ack per burst of confirms), never ahead of a confirm.
  ledger: ReturnType<typeof ackLedger<ConsumeMessage>>;
  acksQueued: boolean;
}

/**
 * Moves up to `count` messages from `source` to the queue `target` with a consumer, without ever
 * losing one: each delivery is published to the target (publish-moved.ts) on the pair's confirm
 * channel, and the staging copy is acked only once the broker confirmed the publish (in bulk, see
 * ackLedger in publish-moved.ts); a return or a nack puts it back. Publishes are pipelined up to `prefetch`. A
 * crash between confirm and ack leaves a duplicate, never a gap. Never rejects: a failure ends the
 * move with a stop reason and the error. `reusable` as for moveOn (mover.ts).
 */
export async function pump(pair: ChannelPair, request: MoveRequest, now: () => number): Promise<Moved> {
  let stopped: () => void = () => undefined;
  const whenStopped = new Promise<void>((resolve) => (stopped = resolve));
  const run: PumpRun = {
    pair,
    request,
    now,
    consumerTag: `fairway-distributor-${randomUUID()}`,
    counts: { received: 0, moved: 0, requeued: 0, parked: 0, unconfirmed: 0 },
    waitsMs: [],
    work: 0,
    awaiting: 0,
    lastDelivery: now(),
    cancel: { done: false, failed: false, settled: Promise.resolve() },
    ended: false,
    stopped,
    drained: () => undefined,
    ledger: ackLedger<ConsumeMessage>(),
    acksQueued: false,
  };
  const finish = watch(run);
  try {
    await consume(run);
  } catch (error) {
    finish();
    // A consume of a missing queue is refused (404); one left unanswered puts the channel in doubt.
    const stop = error instanceof BrokerTimeoutError ? 'channel-closed' : 'source-missing';
    return { result: { ...nothingMoved(stop, errorText(error)), parked: run.counts.parked }, reusable: false };
  }
  await whenStopped;
  await drain(run);
  finish();
  return resultOf(run);
}

/** Stops the pump on its deadline, when its source went idle, or when its consumer closed; returns the unwatch. */
function watch(run: PumpRun): () => void {
  const { request, pair } = run;
  const watchdog = setInterval(
    () => {
      const time = run.now();
      if (time >= request.deadline) stop(run, 'deadline');
      else if (time - run.lastDelivery >= request.idleStopMs) stop(run, 'source-drained');
    },
    Math.max(10, Math.min(250, request.idleStopMs / 4)),
  );
  const onConsumerClose = () => stop(run, 'channel-closed');
  pair.consumer.on('close', onConsumerClose);
  return () => {
    clearInterval(watchdog);
    pair.consumer.off('close', onConsumerClose);
  };
}

/** Sets the prefetch and starts the consumer. */
async function consume(run: PumpRun): Promise<void> {
  const { consumer } = run.pair;
  const { request } = run;
  const prefetch = Math.max(1, Math.min(request.prefetch, request.count, 65535));
  await channelAnswer(consumer, consumer.prefetch(prefetch), 'basic.qos');
  await channelAnswer(
    consumer,
    consumer.consume(request.source, (message) => onDelivery(run, message), {
      noAck: false,
      consumerTag: run.consumerTag,
    }),
    `basic.consume of ${JSON.stringify(request.source)}`,
  );
}

function settle(action: () => void): void {
  try {
    action();
  } catch {
    // The channel is closed: the broker puts the unacked delivery back itself.
  }
}

function sendAcks(run: PumpRun): void {
  run.acksQueued = false;
  const upTo = run.ledger.take();
  if (upTo) settle(() => run.pair.consumer.ack(upTo, true));
}

function queueAcks(run: PumpRun): void {
  if (run.acksQueued) return;
  run.acksQueued = true;
  queueMicrotask(() => sendAcks(run));
}

function stop(run: PumpRun, reason: StopReason, error?: string): void {
  if (run.stopReason) return;
  run.stopReason = reason;
  run.stopError = error;
  run.cancel.settled = run.pair.consumer
    .cancel(run.consumerTag)
    .then(
      () => undefined,
      () => {
        run.cancel.failed = true;
      },
    )
    .finally(() => {
      run.cancel.done = true;
    });
  run.stopped();
}

function putBack(run: PumpRun, message: ConsumeMessage): void {
  settle(() => run.pair.consumer.nack(message, false, true));
  run.ledger.nacked(message.fields.deliveryTag);
}

function onDelivery(run: PumpRun, message: ConsumeMessage | null): void {
  const { request, counts } = run;
  if (message === null) {
    stop(run, 'source-missing'); // the broker cancelled us: the queue was deleted
    return;
  }
  run.ledger.delivered(message.fields.deliveryTag, message);
  if (run.now() >= request.deadline) stop(run, 'deadline');
  if (run.stopReason || counts.received >= request.count) {
    putBack(run, message); // arrived after we stopped
    return;
  }
  if (!takeBytes(request.byteBudget, message.content.length)) {
    putBack(run, message);
    stop(run, 'target-full');
    return;
  }
  counts.received++;
  run.lastDelivery = run.now();
  run.awaiting++;
  const waitMs = waitOf(message.properties.headers, run.lastDelivery);
  const park = mustPark(message, request);
  publishMoved(run.pair, request, message, (outcome) => onOutcome(run, message, park, outcome, waitMs));
  if (counts.received >= request.count) stop(run, 'share-moved');
}

function onOutcome(run: PumpRun, message: ConsumeMessage, park: boolean, outcome: ConfirmOutcome, waitMs?: number) {
  const { counts } = run;
  // Its staging copy was put back at the end of the drain (the late publish of a parked message).
  if (run.ended) return;
  run.awaiting--;
  if (outcome.confirmed) {
    if (park) counts.parked++;
    else {
      counts.moved++;
      if (run.request.workOf) run.work += run.request.workOf(message);
      if (waitMs !== undefined) run.waitsMs.push(waitMs);
    }
    run.ledger.confirmed(message.fields.deliveryTag);
    queueAcks(run);
  } else if (outcome.reason === 'timeout') {
    counts.unconfirmed++; // put back at the end of the drain
  } else {
    counts.requeued++;
    giveBytes(run.request.byteBudget, message.content.length);
    putBack(run, message);
    stop(run, stopOnRefusal(outcome.reason), refusalError(outcome));
  }
  if (run.awaiting === 0) run.drained();
}

/**
 * Confirms still owed, and the cancel, get DRAIN_TIMEOUT_MS; a publish still unanswered then is put
 * back (it may also have reached the target: a duplicate, never a loss). Then the confirmed are acked.
 */
async function drain(run: PumpRun): Promise<void> {
  const drainedAll = new Promise<void>((resolve) => {
    run.drained = resolve;
    if (run.awaiting === 0) resolve();
  });
  await waitAtMost(Promise.all([drainedAll, run.cancel.settled]), DRAIN_TIMEOUT_MS);
  await run.pair.confirms.settledWithin(0);
  run.counts.unconfirmed += run.awaiting; // parked publishes whose queue's declare never came back
  run.ended = true;
  const { consumer } = run.pair;
  for (const { ack, upTo } of run.ledger.finish())
    settle(() => (ack ? consumer.ack(upTo, true) : consumer.nack(upTo, true, true)));
}

function resultOf(run: PumpRun): Moved {
  const { moved, requeued, parked, unconfirmed } = run.counts;
  const result: MoveResult = { moved, requeued, parked, stopReason: run.stopReason! };
  if (run.stopError !== undefined) result.error = run.stopError;
  if (unconfirmed > 0) result.unconfirmed = unconfirmed;
  if (run.request.workOf) result.work = run.work;
  const clean =
    cleanStops.includes(result.stopReason) &&
    unconfirmed === 0 &&
    run.cancel.done &&
    !run.cancel.failed &&
    !run.pair.confirms.closed;
  return { result: withWaits(result, run.waitsMs, run.request), reusable: clean };
}

/** Resolves when `promise` settles or after `ms`, whichever comes first. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
