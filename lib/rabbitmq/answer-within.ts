import { BrokerTimeoutError } from '../platform/errors';
import { AMQP_BOUNDS } from '../platform/network-bounds';
import { type Closable, closeWithin } from './close';

/** Channels and connections an operation was left unanswered on. */
const inDoubt = new WeakSet<object>();

/** Whether an operation on `target` (a channel or connection) was left unanswered: use another. */
export const isInDoubt = (target: object): boolean => inDoubt.has(target);

/**
 * Marks `target` in doubt and closes it in the background (bounded, never rejects). amqplib sends
 * a channel's RPCs one at a time: behind one the broker never answers, every later one would wait too.
 */
export function putInDoubt(target: Closable): void {
  inDoubt.add(target);
  void closeWithin(target);
}

/**
 * `operation`'s result, or a BrokerTimeoutError naming `what` when RabbitMQ has not answered it
 * within `ms` (amqplib waits for an answer forever). `unanswered` is then called with the operation,
 * which may still settle: the caller puts what it was sent on in doubt, and disposes of a late result.
 */
export async function answeredWithin<T>(
  operation: Promise<T>,
  what: string,
  unanswered: (late: Promise<T>) => void,
  ms: number = AMQP_BOUNDS.operationTimeoutMs,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      unanswered(operation);
      reject(new BrokerTimeoutError(`RabbitMQ did not answer ${what} within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([operation, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `operation` on `channel` (a declare, a check, a consume…), answered within the operation bound;
 * when it is not, the channel is put in doubt.
 */
export function channelAnswer<T>(channel: Closable, operation: Promise<T>, what: string): Promise<T> {
  return answeredWithin(operation, what, () => putInDoubt(channel));
}
