import { BrokerError } from '../platform/errors';

/**
 * An amqplib failure as a BrokerError that keeps the broker's reply code (amqplib puts it in `code`
 * when the server closed the channel or connection). A BrokerError is passed on as it is.
 */
export function brokerError(message: string, cause: unknown): BrokerError {
  if (cause instanceof BrokerError) return cause;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return new BrokerError(message, { cause, replyCode: typeof code === 'number' ? code : undefined });
}
