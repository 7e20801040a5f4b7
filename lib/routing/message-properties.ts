import { z } from 'zod';
import { publishRefusals } from '../rabbitmq/publish-refusals';
import { headerTable, shortString } from './amqp-limits';

/**
 * AMQP basic properties a message keeps on every hop (amqplib's publish option names), within
 * AMQP's limits and without what RabbitMQ refuses at publish (`publishRefusals`): such a property
 * would close the channel under every record published beside it.
 */
export const propertiesSchema = z
  .strictObject({
    contentType: shortString().optional(),
    contentEncoding: shortString().optional(),
    headers: headerTable(z.record(z.string(), z.json())).optional(),
    /** 1 transient, 2 persistent; persistent when left out so that a broker restart loses nothing. */
    deliveryMode: z.union([z.literal(1), z.literal(2)]).optional(),
    /** Accepted, but replaced by the tenant's priority (SPEC §1). */
    priority: z.number().int().min(0).max(255).optional(),
    correlationId: shortString().optional(),
    replyTo: shortString().optional(),
    /** Whole milliseconds as a string, at most MAX_EXPIRATION_MS (checked with what the broker refuses). */
    expiration: shortString().optional(),
    messageId: shortString().optional(),
    /** Seconds since the epoch (AMQP timestamp). */
    timestamp: z.number().int().min(0).optional(),
    type: shortString().optional(),
    userId: shortString().optional(),
    appId: shortString().optional(),
  })
  .superRefine((properties, ctx) => {
    for (const { property, reason } of publishRefusals(properties)) {
      ctx.addIssue({ code: 'custom', path: property.split('.'), message: reason });
    }
  });

/** Headers are any AMQP field values (a task message's binary SQS attributes become Buffers). */
export type MessageProperties = Omit<z.infer<typeof propertiesSchema>, 'priority' | 'headers'> & {
  headers?: Record<string, unknown>;
};
