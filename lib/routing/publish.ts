import type { ConfirmChannel, Options } from 'amqplib';

export interface Publication {
  queue: string;
  body: Buffer;
  options: Options.Publish;
}

const pending = Symbol('pending');

/** `unconfirmed`: the broker had not answered when the wait ended; it may still confirm later. */
export type PublishOutcome = { routed: true } | { routed: false; reason: string; unconfirmed?: true };

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
  const returned = new Set<string>();
  const onReturn = (message: { fields: { routingKey: string } }) => returned.add(message.fields.routingKey);
  channel.on('return', onReturn);
  try {
    // Per message: pending until the broker answers, then undefined (acked) or why not.
    const answers: (string | undefined | typeof pending)[] = publications.map(() => pending);
    const confirms: Promise<void>[] = [];
    for (const [i, publication] of publications.entries()) {
      const { confirmed, writable } = publishOne(channel, publication);
      confirms.push(
        confirmed.then((answer) => {
          answers[i] = answer;
        }),
      );
      if (!writable) await drainedOrClosed(channel);
    }
    await withTimeout(Promise.all(confirms), confirmTimeoutMs);
    return publications.map((publication, i): PublishOutcome => {
      const answer = answers[i];
      if (answer === pending) {
        return { routed: false, reason: `the broker did not confirm within ${confirmTimeoutMs} ms`, unconfirmed: true };
      }
      if (answer !== undefined) return { routed: false, reason: answer };
      if (returned.has(publication.queue)) {
        return {
          routed: false,
          reason: `the broker returned it: no queue ${JSON.stringify(publication.queue)} to route to`,
        };
      }
      return { routed: true };
    });
  } finally {
    channel.off('return', onReturn);
  }
}

/** `confirmed` resolves to undefined once the broker acked, or to the reason it did not. */
function publishOne(channel: ConfirmChannel, { queue, body, options }: Publication) {
  let writable = true;
  const confirmed = new Promise<string | undefined>((resolve) => {
    try {
      writable = channel.publish('', queue, body, { ...options, mandatory: true }, (error) =>
        resolve(error ? `the broker did not confirm it (${(error as Error).message})` : undefined),
      );
    } catch (error) {
      resolve(`could not publish (${(error as Error).message})`);
    }
  });
  return { confirmed, writable };
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
