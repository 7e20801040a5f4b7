import type { ConfirmChannel, Options } from 'amqplib';
import { BrokerError } from '../errors';
import { brokerError } from '../rabbitmq/broker-error';

export interface Publication {
  queue: string;
  body: Buffer;
  options: Options.Publish;
}

const pending = Symbol('pending');

/** `unconfirmed`: the broker had not answered when the wait ended; it may still confirm later. */
export type PublishOutcome = { routed: true } | { routed: false; error: BrokerError; unconfirmed?: true };

/**
 * Publishes every message on one confirm channel with `mandatory` set, pipelined, and waits for
 * all confirms. A message counts as routed only if the broker confirmed it and did not return it.
 *
 * The broker sends a message's basic.return before its ack, but the return does not say which
 * publish it answers; so a return for a queue fails every message of the batch sent to that queue.
 * That may report a routed message as failed (it is retried: a duplicate), never the reverse.
 */
export async function publishAll(
  channel: ConfirmChannel,
  publications: readonly Publication[],
  confirmTimeoutMs: number,
): Promise<PublishOutcome[]> {
  // Routing key → the reply code of its return (312 no route).
  const returned = new Map<string, number>();
  const onReturn = (message: { fields: { routingKey: string; replyCode: number } }) =>
    returned.set(message.fields.routingKey, message.fields.replyCode);
  channel.on('return', onReturn);
  try {
    // Per message: pending until the broker answers, then undefined (acked) or why not. One
    // promise for the batch, not one per message: the router's hot path allocates per event.
    const answers: (BrokerError | undefined | typeof pending)[] = publications.map(() => pending);
    let unanswered = publications.length;
    let allAnswered = () => {};
    const answered = new Promise<void>((resolve) => {
      allAnswered = resolve;
    });
    // The first answer counts: a publish that threw may still be failed by the channel's close.
    const answer = (i: number, outcome: BrokerError | undefined) => {
      if (answers[i] !== pending) return;
      answers[i] = outcome;
      if (--unanswered === 0) allAnswered();
    };
    if (unanswered === 0) allAnswered();
    for (const [i, publication] of publications.entries()) {
      const writable = publishOne(channel, publication, (outcome) => answer(i, outcome));
      if (!writable) await drainedOrClosed(channel);
    }
    await withTimeout(answered, confirmTimeoutMs);
    return publications.map((publication, i): PublishOutcome => {
      const outcome = answers[i];
      if (outcome === pending) {
        const error = new BrokerError(`the broker did not confirm within ${confirmTimeoutMs} ms`);
        return { routed: false, error, unconfirmed: true };
      }
      if (outcome !== undefined) return { routed: false, error: outcome };
      const replyCode = returned.get(publication.queue);
      if (replyCode !== undefined) {
        const error = new BrokerError(
          `the broker returned it: no queue ${JSON.stringify(publication.queue)} to route to`,
          { replyCode },
        );
        return { routed: false, error };
      }
      return { routed: true };
    });
  } finally {
    channel.off('return', onReturn);
  }
}

/** Publishes one message; `answered` gets undefined once the broker acked, or why not (a nack, a closed channel). */
function publishOne(
  channel: ConfirmChannel,
  { queue, body, options }: Publication,
  answered: (outcome: BrokerError | undefined) => void,
): boolean {
  try {
    return channel.publish('', queue, body, { ...options, mandatory: true }, (error) =>
      answered(error ? brokerError('the broker did not confirm it', error) : undefined),
    );
  } catch (error) {
    answered(brokerError('could not publish', error));
    return true;
  }
}

/** The socket buffer is full: wait until it drains (or the channel closes, failing the rest). */
function drainedOrClosed(channel: ConfirmChannel): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      channel.off('drain', done);
      channel.off('close', done);
      resolve();
    };
    channel.once('drain', done);
    channel.once('close', done);
  });
}

async function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
