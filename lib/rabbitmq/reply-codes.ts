import { BrokerError } from '../platform/errors';

/**
 * The AMQP 0-9-1 reply codes (the spec's constants, as RabbitMQ sends them in channel.close,
 * connection.close and basic.return), by name. Code compares against these, never a bare number.
 */
export const ReplyCode = {
  /** basic.return: a mandatory message no queue took (on the default exchange: no queue of that name). */
  NO_ROUTE: 312,
  /** The broker closed the connection: a restart, a shutdown, or an operator's `close_connection`. */
  CONNECTION_FORCED: 320,
  /** The user may not do this (a vhost, a queue, or a `user-id` other than the connection's). */
  ACCESS_REFUSED: 403,
  /** The queue or exchange does not exist. */
  NOT_FOUND: 404,
  /** Another connection holds the queue exclusively. */
  RESOURCE_LOCKED: 405,
  /** The operation's precondition failed: a queue exists with other arguments, a property the broker refuses. */
  PRECONDITION_FAILED: 406,
  /** The connection cannot do this now (e.g. opening a vhost it may not open). */
  NOT_ALLOWED: 530,
  /** The broker failed internally. */
  INTERNAL_ERROR: 541,
} as const;

export type ReplyCodeName = keyof typeof ReplyCode;

const names = new Map<number, ReplyCodeName>(
  Object.entries(ReplyCode).map(([name, code]) => [code, name as ReplyCodeName]),
);

/** `406 PRECONDITION_FAILED`, or the bare number for a code not in the table. */
export function describeReplyCode(code: number): string {
  const name = names.get(code);
  return name === undefined ? String(code) : `${code} ${name}`;
}

/**
 * A channel exception (AMQP 0-9-1: 403, 404, 405, 406): the broker refused one operation and closed
 * only the channel it came on; the connection, and other channels, stay open.
 */
export function isChannelException(code: number | undefined): boolean {
  return (
    code === ReplyCode.ACCESS_REFUSED ||
    code === ReplyCode.NOT_FOUND ||
    code === ReplyCode.RESOURCE_LOCKED ||
    code === ReplyCode.PRECONDITION_FAILED
  );
}

/**
 * An amqplib failure as a BrokerError that keeps the broker's reply code (amqplib puts it in `code`
 * when the server closed the channel or connection). A BrokerError is passed on as it is.
 */
export function brokerError(message: string, cause: unknown): BrokerError {
  if (cause instanceof BrokerError) return cause;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return new BrokerError(message, { cause, replyCode: typeof code === 'number' ? code : undefined });
}
