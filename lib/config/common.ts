import type { z } from 'zod';
import { isDotSegment } from '../rabbitmq/api-path';
import { setting } from './env';

/** Where the AWS SDK sends DynamoDB calls; an endpoint is set only for local or embedded DynamoDB. */
export const dynamoSettings = {
  AWS_REGION: setting.text().default('us-east-1'),
  DYNAMODB_ENDPOINT: setting.optionalUrl(),
};

/** How to reach RabbitMQ: AMQP for messages, the management API for queue listings. */
export const rabbitSettings = {
  AMQP_URL: setting.url(),
  RABBITMQ_MANAGEMENT_URL: setting.url(),
  RABBITMQ_VHOST: setting
    .text()
    .default('/')
    .refine((vhost) => !isDotSegment(vhost), {
      error: 'must not be "." or ".." (the management API cannot address it)',
    }),
};

/** How to reach the NXRG registry and OpenXDS repository databases. */
export const postgresSettings = {
  NXRG_DATABASE_URL: setting.url(),
  OPENXDS_DATABASE_URL: setting.url(),
};

export type DynamoConfig = z.infer<z.ZodObject<typeof dynamoSettings>>;
