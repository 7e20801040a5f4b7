import type { Message } from 'amqplib';
import { errorText } from '../../platform/errors';
import type { UnconfirmedReason } from '../../rabbitmq/confirms';
import { type WaitFigures, waitFigures } from '../waits';

/** One staging queue's move, as the pass asks a mover for it. */
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
  /** The AMQP priority every message moved to the target gets (quiet tenants first); absent: each keeps its own. */
  priority?: number;
  /** The RabbitMQ user the distributor publishes as: a message with another `user-id` is parked. */
  publisherUser: string;
  /** With a target byte limit: the body bytes its movers may still publish, shared by them all. */
  byteBudget?: ByteBudget;
  /** The target's measured waits (ms) this pass, shared by its movers: each adds those of the messages it moved. */
  waitsMs?: number[];
  /** Fair by work: the work a moved message brings (planning/weights.ts `messageWork`), summed in `MoveResult.work`. */
  workOf?: (message: Message) => number;
}

/** What is left of a target's byte room (`max-length-bytes`) this pass; movers take from it before each publish. */
export interface ByteBudget {
  remaining: number;
  /** The largest body taken so far: what the execution knows of a message's size in the target. */
  largest?: number;
}

/** Takes `bytes` from the budget if they fit (always, without a budget). */
export function takeBytes(budget: ByteBudget | undefined, bytes: number): boolean {
  if (budget === undefined) return true;
  if (bytes > budget.remaining) return false;
  budget.remaining -= bytes;
  budget.largest = Math.max(budget.largest ?? 0, bytes);
  return true;
}

/** Gives back the bytes of a message that was put back in staging. */
export function giveBytes(budget: ByteBudget | undefined, bytes: number): void {
  if (budget !== undefined) budget.remaining += bytes;
}

export type StopReason =
  | 'share-moved'
  | 'source-drained'
  | 'source-missing'
  | 'target-missing'
  | 'target-rejected'
  /** The next message would pass the target's byte limit: it stays in staging. */
  | 'target-full'
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
   * Published, but no confirm came within DRAIN_TIMEOUT_MS of stopping: the staging copies are put
   * back, and may also have reached the target (duplicates, never losses).
   */
  unconfirmed?: number;
  error?: string;
  /** The wait in staging of the moved messages that carried the router's stamp (lib/staging/staging-names.ts). */
  wait?: WaitFigures;
  /** With `MoveRequest.workOf`: the work of the messages moved. */
  work?: number;
}

/** A move and whether it left its channel pair clean for the next move (see moveOn). */
export interface Moved {
  result: MoveResult;
  reusable: boolean;
}

/** After stopping, how long to wait for outstanding confirms before giving up on them. */
export const DRAIN_TIMEOUT_MS = 5_000;

/** Stops that leave both channels usable, once nothing is in flight and the consumer is cancelled. */
export const cleanStops: readonly StopReason[] = ['share-moved', 'source-drained', 'target-full', 'deadline'];

export const nothingMoved = (stopReason: StopReason, error?: string): MoveResult => ({
  moved: 0,
  requeued: 0,
  parked: 0,
  stopReason,
  ...(error === undefined ? {} : { error }),
});

/** The error a move reports for a refusal: a nack's or a failed send's; a return or a close says it all in its stop reason. */
export const refusalError = (outcome: { reason: UnconfirmedReason; error: unknown }): string | undefined =>
  outcome.reason === 'nacked' || outcome.reason === 'unsent' ? errorText(outcome.error) : undefined;

/** Why a move stops when the broker did not take one of its messages (no answer in time: the deadline passed). */
export function stopOnRefusal(reason: UnconfirmedReason): StopReason {
  if (reason === 'returned') return 'target-missing';
  if (reason === 'closed') return 'channel-closed';
  if (reason === 'timeout') return 'deadline';
  return 'target-rejected';
}

/** A move's result with the waits of the messages it moved, which also go to the target's (`request.waitsMs`). */
export function withWaits(result: MoveResult, waitsMs: readonly number[], request: MoveRequest): MoveResult {
  const wait = waitFigures(waitsMs);
  if (wait === undefined) return result;
  // One by one: a share can be larger than a spread's argument limit.
  if (request.waitsMs) for (const ms of waitsMs) request.waitsMs.push(ms);
  return { ...result, wait };
}
