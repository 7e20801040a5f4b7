import type { z } from 'zod';
import { amqpVhost } from '../rabbitmq/amqp-url';
import { isDotSegment } from '../rabbitmq/api-path';
import { setting } from './env';

/** Where the AWS SDK sends DynamoDB calls; an endpoint is set only for local or embedded DynamoDB. */
export const dynamoSettings = {
  AWS_REGION: setting.text().default('us-east-1'),
  DYNAMODB_ENDPOINT: setting.optionalUrl(['http', 'https']),
};

/** How to reach RabbitMQ: AMQP for messages, the management API for queue listings. */
export const rabbitSettings = {
  AMQP_URL: setting.url(['amqp', 'amqps']),
  RABBITMQ_MANAGEMENT_URL: setting.url(['http', 'https']),
  RABBITMQ_VHOST: setting.textOr('/').refine((vhost) => !isDotSegment(vhost), {
    error: 'must not be "." or ".." (the management API cannot address it)',
  }),
};

/**
 * The vhost rule: the AMQP connection must open RABBITMQ_VHOST, the vhost the management API is
 * asked about. Otherwise the router stages messages in one vhost and the distributor looks in another.
 */
export function checkVhostRule(config: { AMQP_URL: string; RABBITMQ_VHOST: string }, ctx: z.RefinementCtx): void {
  const opened = amqpVhost(config.AMQP_URL);
  if (opened === config.RABBITMQ_VHOST) return;
  ctx.addIssue({
    code: 'custom',
    path: ['AMQP_URL'],
    message:
      `opens vhost ${JSON.stringify(opened)} but RABBITMQ_VHOST is ${JSON.stringify(config.RABBITMQ_VHOST)}; ` +
      'both must name the same vhost (the URL path is the vhost, percent-encoded: %2F for "/")',
  });
}

/** How to reach the NXRG registry and OpenXDS repository databases. */
export const postgresSettings = {
  NXRG_DATABASE_URL: setting.url(['postgres', 'postgresql']),
  OPENXDS_DATABASE_URL: setting.url(['postgres', 'postgresql']),
};

export type DynamoConfig = z.infer<z.ZodObject<typeof dynamoSettings>>;
