/**
 * What RabbitMQ refuses in a message's properties at basic.publish (rabbit_channel and rabbit_basic,
 * 3.10–4.x). A refusal is a channel exception (406 PRECONDITION_FAILED): it closes the channel and
 * fails every publish in flight on it, so a publisher checks these before publishing. `user-id` is
 * checked against the connection's user apart (`userIdRefusal`), since it needs that user.
 */

/**
 * The longest per-message TTL RabbitMQ accepts: 10 years in ms (3.10.8 and later; earlier versions
 * refused values from 2^63 on). A longer `expiration` closes the channel.
 */
export const MAX_EXPIRATION_MS = 315_360_000_000;

/**
 * The direct reply-to pseudo-queue: a `reply-to` of exactly this name is refused on a channel that
 * has no direct reply-to consumer, which a publisher that only publishes never has.
 */
export const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

/**
 * Sender-selected distribution: RabbitMQ routes a copy of the message to every queue these headers
 * name (and refuses a value that is not an array), whatever queue it was published to.
 */
export const ROUTING_HEADERS = ['CC', 'BCC'] as const;

/** A property the broker would refuse or act on: its name (`headers.CC` for a header), and why. */
export interface PropertyRefusal {
  property: string;
  reason: string;
}

/** The properties of a publish, under amqplib's names, as far as the broker checks them. */
export interface CheckedProperties {
  deliveryMode?: unknown;
  expiration?: unknown;
  replyTo?: unknown;
  headers?: Readonly<Record<string, unknown>>;
}

/** Everything in `properties` the broker would refuse, or would route beyond the queue published to. */
export function publishRefusals(properties: CheckedProperties): PropertyRefusal[] {
  const refusals: PropertyRefusal[] = [];
  const { deliveryMode, expiration, replyTo, headers } = properties;
  if (deliveryMode !== undefined && deliveryMode !== 1 && deliveryMode !== 2) {
    refusals.push({ property: 'deliveryMode', reason: 'must be 1 (transient) or 2 (persistent)' });
  }
  if (expiration !== undefined) {
    const reason = expirationProblem(expiration);
    if (reason) refusals.push({ property: 'expiration', reason });
  }
  if (replyTo === DIRECT_REPLY_TO) {
    refusals.push({
      property: 'replyTo',
      reason: `must not be "${DIRECT_REPLY_TO}" (RabbitMQ refuses it from a publisher without a direct reply-to consumer)`,
    });
  }
  for (const header of ROUTING_HEADERS) {
    if (headers && Object.hasOwn(headers, header) && headers[header] !== undefined) {
      refusals.push({
        property: `headers.${header}`,
        reason: 'must not be set (RabbitMQ would copy the message to every queue it names, or refuse it)',
      });
    }
  }
  return refusals;
}

/** RabbitMQ refuses a `user-id` other than the connection's user (unless that user is an impersonator). */
export function userIdRefusal(userId: unknown, connectionUser: string): PropertyRefusal | undefined {
  if (userId === undefined || userId === connectionUser) return undefined;
  return {
    property: 'userId',
    reason: 'must be the RabbitMQ user Fairway publishes as, or be left out (the broker refuses any other)',
  };
}

function expirationProblem(expiration: unknown): string | undefined {
  if (typeof expiration !== 'string' || !/^\d+$/.test(expiration)) {
    return 'must be a whole number of milliseconds, as a string';
  }
  // Compared as text past 15 digits: Number() would round a value just over the limit down to it.
  const digits = expiration.replace(/^0+(?=\d)/, '');
  const limit = String(MAX_EXPIRATION_MS);
  const tooLarge = digits.length > limit.length || (digits.length === limit.length && digits > limit);
  return tooLarge ? `must be at most ${MAX_EXPIRATION_MS} (10 years, the most RabbitMQ accepts)` : undefined;
}
