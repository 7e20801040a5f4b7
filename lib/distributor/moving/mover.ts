import type { GetMessage } from 'amqplib';
import { BrokerError, BrokerTimeoutError, errorText } from '../../platform/errors';
import type { ConfirmOutcome } from '../../rabbitmq/confirms';
import { channelAnswer } from '../../rabbitmq/connection';
import { waitOf } from '../waits';
import type { ChannelPair, ChannelSlots } from './channels';
import {
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
import { pump } from './pump';

/**
 * Moves one staging queue's share on channels the caller owns (a channel pair per concurrency slot
 * saves two opens and two closes per staging queue): a share of up to GET_SHARE_MAX with
 * `basic.get`, a larger one with a consumer. `reusable` is true only when the move left both
 * channels as it found them: open, the consumer cancelled, every delivery acked or put back, no
 * confirm owed. Otherwise the caller closes them, which puts back whatever is still unacked.
 */
export async function moveOn(pair: ChannelPair, request: MoveRequest, now: () => number = Date.now): Promise<Moved> {
  if (request.count <= 0) return { result: nothingMoved('share-moved'), reusable: true };
  if (request.count <= GET_SHARE_MAX) return moveByGet(pair, request, now);
  return pump(pair, request, now);
}

/** What every mover of one target's shares has in common. */
export interface ShareMoves extends Omit<MoveRequest, 'source' | 'count' | 'prefetch'> {
  /** A mover's prefetch is its share, at most this. */
  maxPrefetch: number;
}

/**
 * Moves every share, one mover per slot at a time on the slot's channel pair, until all movers
 * ended; each mover's time goes to `learn`. A mover whose turn comes after the deadline does not
 * start: its queue keeps its messages for the next pass. Never rejects: a slot whose channels
 * could not be opened ends its share as `channel-closed`.
 */
export function moveShares(
  slots: ChannelSlots,
  shares: readonly { name: string; share: number; priority?: number }[],
  moves: ShareMoves,
  learn: (share: number, ms: number) => void,
  now: () => number,
): Promise<MoveResult[]> {
  const { maxPrefetch, ...request } = moves;
  const late: MoveResult = { moved: 0, requeued: 0, parked: 0, stopReason: 'deadline' };
  return Promise.all(
    shares.map(({ name, share, priority }) =>
      slots
        .use(async (pair) => {
          if (now() >= moves.deadline) return { value: late, reusable: true };
          const started = now();
          const prefetch = Math.min(share, maxPrefetch);
          const source = { source: name, count: share, prefetch, ...(priority === undefined ? {} : { priority }) };
          const moved = await moveOn(pair, { ...request, ...source }, now);
          learn(share, now() - started);
          return { value: moved.result, reusable: moved.reusable };
        })
        .catch((error: unknown): MoveResult => ({ ...late, stopReason: 'channel-closed', error: errorText(error) })),
    ),
  );
}

/**
 * Shares up to this many messages are taken one `basic.get` at a time: a get and a confirmed
 * publish are two round trips a message, where a consumer costs four before the first message
 * (prefetch, consume, confirm, cancel). Most staging queues of a busy target hold one or two.
 */
export const GET_SHARE_MAX = 2;

/**
 * Moves up to `count` messages with `basic.get` on the pair's consumer, one at a time, with the
 * pump's guarantees: each message is published to `target` (publish-moved.ts) on the pair's
 * confirm channel, and acked in the staging queue only once the broker confirmed the publish; a
 * return, a nack or a closed publisher puts it back (nack with requeue). A confirm that does not
 * come leaves the message unacked for the caller to close the consumer, which puts it back.
 */
export async function moveByGet(pair: ChannelPair, request: MoveRequest, now: () => number): Promise<Moved> {
  const run: GetRun = { pair, request, now, counts: { moved: 0, requeued: 0, parked: 0 }, waitsMs: [], work: 0 };
  let consumerClosed = false;
  const onConsumerClose = () => {
    consumerClosed = true;
  };
  pair.consumer.on('close', onConsumerClose);
  let stop: Stop | undefined;
  while (stop === undefined) stop = await moveOne(run);
  pair.consumer.off('close', onConsumerClose);
  const clean = stop.reusable && !consumerClosed && !pair.confirms.closed;
  const work = request.workOf ? { work: run.work } : {};
  const result = { ...run.counts, stopReason: stop.stopReason, ...work, ...stop.extra };
  return { result: withWaits(result, run.waitsMs, request), reusable: clean };
}

/** A get mover's state: what it moved, requeued and parked, and the moved messages' waits in staging. */
interface GetRun {
  pair: ChannelPair;
  request: MoveRequest;
  now: () => number;
  counts: { moved: number; requeued: number; parked: number };
  /** The waits in staging of the messages moved, measured when each was taken. */
  waitsMs: number[];
  /** With `request.workOf`: the work of the messages moved. */
  work: number;
}

/** Why the get mover stopped, and whether its channels may serve another move. */
interface Stop {
  stopReason: StopReason;
  reusable: boolean;
  extra?: Partial<MoveResult>;
}

const stopped = (stopReason: StopReason, reusable: boolean, extra: Partial<MoveResult> = {}): Stop => ({
  stopReason,
  reusable,
  extra,
});

/** Gets, publishes and settles one message; a stop ends the move. */
async function moveOne(run: GetRun): Promise<Stop | undefined> {
  const { pair, request, now, counts } = run;
  const { consumer } = pair;
  if (counts.moved + counts.requeued + counts.parked >= request.count) return stopped('share-moved', true);
  if (now() >= request.deadline) return stopped('deadline', true);
  let message: GetMessage | false;
  try {
    message = await channelAnswer(
      consumer,
      consumer.get(request.source, { noAck: false }),
      `basic.get of ${JSON.stringify(request.source)}`,
    );
  } catch (error) {
    // A get on a missing queue closes the channel (404); one left unanswered puts it in doubt.
    const stop = error instanceof BrokerTimeoutError ? 'channel-closed' : 'source-missing';
    return stopped(stop, false, { error: errorText(error) });
  }
  if (message === false) return stopped('source-drained', true);
  const waitMs = waitOf(message.properties.headers, now());
  if (!takeBytes(request.byteBudget, message.content.length)) {
    try {
      consumer.nack(message, false, true);
    } catch {
      return stopped('channel-closed', false);
    }
    return stopped('target-full', true);
  }
  const outcome = await confirmOf(pair, request, message, Math.max(0, request.deadline - now()) + DRAIN_TIMEOUT_MS);
  if (!outcome.confirmed && outcome.reason === 'timeout') return stopped('deadline', false, { unconfirmed: 1 });
  return settle(run, message, outcome, waitMs);
}

/** Acks a confirmed message in staging, or puts a refused one back (a refusal stops the move). */
function settle(
  run: GetRun,
  message: GetMessage,
  outcome: ConfirmOutcome,
  waitMs: number | undefined,
): Stop | undefined {
  const { consumer } = run.pair;
  const { counts, request } = run;
  try {
    if (!outcome.confirmed) {
      giveBytes(request.byteBudget, message.content.length);
      consumer.nack(message, false, true);
      counts.requeued++;
      const error = refusalError(outcome);
      return stopped(stopOnRefusal(outcome.reason), false, error === undefined ? {} : { error });
    }
    consumer.ack(message);
    if (mustPark(message, request)) counts.parked++;
    else {
      counts.moved++;
      if (request.workOf) run.work += request.workOf(message);
      if (waitMs !== undefined) run.waitsMs.push(waitMs);
    }
    return undefined;
  } catch {
    // The consumer closed: the broker puts the unacked message back itself.
    return stopped('channel-closed', false);
  }
}

/** Publishes one message and waits at most `ms` for the broker's answer (then a `timeout` outcome). */
async function confirmOf(
  pair: ChannelPair,
  request: MoveRequest,
  message: GetMessage,
  ms: number,
): Promise<ConfirmOutcome> {
  let answered: (outcome: ConfirmOutcome) => void = () => undefined;
  const outcome = new Promise<ConfirmOutcome>((resolve) => (answered = resolve));
  publishMoved(pair, request, message, answered);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const first = await Promise.race([outcome, timedOut]);
  clearTimeout(timer);
  if (first !== 'timeout') return first;
  // Whatever the broker still owes is settled as a timeout: a late confirm must not answer the next publish.
  await pair.confirms.settledWithin(0);
  return { confirmed: false, reason: 'timeout', error: new BrokerError(`the broker did not confirm within ${ms} ms`) };
}
