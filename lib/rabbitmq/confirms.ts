import type { ConfirmChannel, Message, Options } from 'amqplib';
import { BrokerError, BrokerTimeoutError } from '../platform/errors';
import { closeWithin } from './connection';
import { brokerError, describeReplyCode, isChannelException } from './reply-codes';

/** A message for one queue, published through the default exchange with `mandatory` set. */
export interface Publication {
  queue: string;
  body: Buffer;
  options: Options.Publish;
}

/**
 * Why a publish is not confirmed: `returned` (no queue took it; its ack came after the return),
 * `nacked` (the queue refused it, e.g. `x-overflow: reject-publish` at its limit), `closed` (the
 * channel closed before the broker answered: the message may or may not be in the queue),
 * `unsent` (the client could not encode or send it; the broker never saw it), `timeout` (no answer
 * in time; the broker may still confirm it later, so the channel's state is in doubt).
 */
export type UnconfirmedReason = 'returned' | 'nacked' | 'closed' | 'unsent' | 'timeout';

export type ConfirmOutcome = { confirmed: true } | { confirmed: false; reason: UnconfirmedReason; error: BrokerError };

const confirmed: ConfirmOutcome = Object.freeze({ confirmed: true });

/** What a nack means in practice: a queue refused the message (at a length limit with overflow reject-publish) or failed to take it. */
const NACKED =
  'the broker refused it (nack): its queue is at a length limit (overflow reject-publish) or could not take it';

interface InFlight {
  publication: Publication;
  settled: (outcome: ConfirmOutcome) => void;
  /** The reply code of a basic.return that may be this publish's. */
  returnedWith?: number;
}

/**
 * The publishes on one confirm channel and the broker's answers, with the channel's return, error
 * and close listeners in one place. Every publish is `mandatory` and settles exactly once (the
 * first answer counts: a publish that threw may be failed again by the closing channel).
 *
 * A basic.return comes before the ack of the message it returns but does not say which publish it
 * answers: it marks every publish still in flight to the same queue with the same body. That may
 * report a routed message as returned (a duplicate when it is retried), never the reverse.
 *
 * Call `detach` once nothing is in flight, or the channel is discarded.
 */
export class ConfirmTracker {
  private readonly inFlight = new Set<InFlight>();
  private closeCause: unknown;
  private isClosed = false;
  private allSettled: (() => void) | undefined;

  constructor(private readonly channel: ConfirmChannel) {
    channel.on('return', this.onReturn);
    channel.on('error', this.onError);
    // Ahead of amqplib's own close listener, which fails every pending confirm with a bare
    // "channel closed": these settle first, with the broker's reason.
    channel.prependListener('close', this.onClose);
  }

  /** Publishes awaiting the broker's answer. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** The channel has closed; nothing more can be published on it. */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Publishes `publication`; `settled` gets its outcome once. False when the socket buffer is full:
   * await `writableWithin()` before the next publish.
   */
  publish(publication: Publication, settled: (outcome: ConfirmOutcome) => void): boolean {
    const entry: InFlight = { publication, settled };
    this.inFlight.add(entry);
    const { queue, body, options } = publication;
    try {
      return this.channel.publish('', queue, body, { ...options, mandatory: true }, (error) =>
        this.answer(entry, error),
      );
    } catch (error) {
      const reason = this.isClosed ? 'closed' : 'unsent';
      this.settle(entry, { confirmed: false, reason, error: brokerError('could not publish', error) });
      return true;
    }
  }

  /**
   * True once the socket buffer has drained, or the channel closed (the publishes after it fail);
   * false when neither happened within `ms` (a broker that stopped reading: the socket never drains).
   */
  writableWithin(ms: number): Promise<boolean> {
    if (this.isClosed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.channel.off('drain', onDrain);
        this.channel.off('close', onDrain);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      this.channel.once('drain', onDrain);
      this.channel.once('close', onDrain);
    });
  }

  /**
   * Resolves once every publish so far has settled, or after `ms`: those still unanswered then
   * settle as `timeout` (a later answer is ignored). A `timeout` leaves the channel in doubt: a
   * confirm it still owes would answer a later publish's wait, so close the channel.
   */
  async settledWithin(ms: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const settledAll = new Promise<void>((resolve) => {
      this.allSettled = resolve;
    });
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    try {
      await Promise.race([settledAll, timedOut]);
    } finally {
      clearTimeout(timer);
      this.allSettled = undefined;
    }
    for (const entry of [...this.inFlight]) {
      const error = new BrokerError(`the broker did not confirm within ${ms} ms`);
      this.settle(entry, { confirmed: false, reason: 'timeout', error });
    }
  }

  /** Removes the listeners from the channel. */
  detach(): void {
    this.channel.off('return', this.onReturn);
    this.channel.off('error', this.onError);
    this.channel.off('close', this.onClose);
  }

  private answer(entry: InFlight, error: unknown): void {
    if (!this.inFlight.has(entry)) return;
    if (error) {
      if (this.isClosed) this.settle(entry, this.closedOutcome());
      else
        this.settle(entry, {
          confirmed: false,
          reason: 'nacked',
          error: brokerError(NACKED, error),
        });
    } else if (entry.returnedWith !== undefined) {
      const error = new BrokerError(
        `the broker returned it (${describeReplyCode(entry.returnedWith)}): no queue ${JSON.stringify(entry.publication.queue)} to route to`,
        { replyCode: entry.returnedWith },
      );
      this.settle(entry, { confirmed: false, reason: 'returned', error });
    } else {
      this.settle(entry, confirmed);
    }
  }

  private settle(entry: InFlight, outcome: ConfirmOutcome): void {
    if (!this.inFlight.delete(entry)) return;
    entry.settled(outcome);
    if (this.inFlight.size === 0) this.allSettled?.();
  }

  private closedOutcome(): ConfirmOutcome {
    const cause = this.closeCause ?? new Error('channel closed');
    return {
      confirmed: false,
      reason: 'closed',
      error: brokerError('the channel closed before the broker confirmed it', cause),
    };
  }

  private readonly onReturn = (message: Message): void => {
    const { exchange, routingKey, replyCode } = message.fields as Message['fields'] & { replyCode: number };
    if (exchange !== '') return;
    for (const entry of this.inFlight) {
      if (entry.publication.queue === routingKey && entry.publication.body.equals(message.content)) {
        entry.returnedWith = replyCode;
      }
    }
  };

  /** amqplib emits the broker's channel.close as an error (with the reply code) just before 'close'. */
  private readonly onError = (error: unknown): void => {
    this.closeCause = error;
  };

  private readonly onClose = (): void => {
    this.isClosed = true;
    for (const entry of [...this.inFlight]) this.settle(entry, this.closedOutcome());
  };
}

/**
 * Publishes every message on `channel`, pipelined (waiting for the socket to drain when its buffer
 * fills, `timeoutMs` at most in all), and waits up to `timeoutMs` for the broker's answers: one
 * outcome per publication, in order. Those the socket had no room for in time are `unsent`.
 */
export async function publishAndConfirm(
  channel: ConfirmChannel,
  publications: readonly Publication[],
  timeoutMs: number,
  now: () => number = Date.now,
): Promise<ConfirmOutcome[]> {
  const tracker = new ConfirmTracker(channel);
  const drainDeadline = now() + timeoutMs;
  try {
    const outcomes = new Array<ConfirmOutcome>(publications.length);
    for (let i = 0; i < publications.length; i++) {
      const writable = tracker.publish(publications[i]!, (outcome) => {
        outcomes[i] = outcome;
      });
      if (!writable && !(await tracker.writableWithin(drainDeadline - now()))) {
        const error = new BrokerTimeoutError(
          `RabbitMQ took no more publishes within ${timeoutMs} ms (the connection's send buffer did not drain)`,
        );
        outcomes.fill({ confirmed: false, reason: 'unsent', error }, i + 1);
        break;
      }
    }
    await tracker.settledWithin(timeoutMs);
    return outcomes;
  } finally {
    tracker.detach();
  }
}

/**
 * `publishAndConfirm`, and when a channel exception closed the channel under the batch (the broker
 * refused one message, e.g. a property it does not accept), the publishes that close cut off go
 * again one at a time, on a channel opened for them: the refused one then fails alone, closing
 * only its own channel, and every other is confirmed. Those the broker had enqueued before the
 * close arrive twice (at least once, never lost). The second round is bounded by `timeoutMs` too;
 * what it does not reach keeps its `closed` outcome.
 */
export async function publishIsolatingRefusals(
  channel: ConfirmChannel,
  openChannel: () => Promise<ConfirmChannel>,
  publications: readonly Publication[],
  timeoutMs: number,
  now: () => number = Date.now,
): Promise<ConfirmOutcome[]> {
  const outcomes = await publishAndConfirm(channel, publications, timeoutMs);
  const cutOff = outcomes.flatMap((outcome, i) => (closedByRefusal(outcome) ? [i] : []));
  if (cutOff.length === 0) return outcomes;
  const deadline = now() + timeoutMs;
  let alone: ConfirmChannel | undefined;
  try {
    for (const i of cutOff) {
      const remaining = deadline - now();
      if (remaining <= 0) break;
      alone ??= await openChannel();
      const [outcome] = await publishAndConfirm(alone, [publications[i]!], remaining);
      outcomes[i] = outcome!;
      if (!outcome!.confirmed && (outcome!.reason === 'closed' || outcome!.reason === 'timeout')) {
        await closeWithin(alone);
        alone = undefined;
      }
    }
  } catch {
    // No channel could be opened (the connection went too): the rest keep their `closed` outcome.
  } finally {
    if (alone) await closeWithin(alone);
  }
  return outcomes;
}

function closedByRefusal(outcome: ConfirmOutcome): boolean {
  return !outcome.confirmed && outcome.reason === 'closed' && isChannelException(outcome.error.replyCode);
}
