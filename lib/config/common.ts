import type { z } from 'zod';
import { setting } from './env';

/** Where the AWS SDK sends DynamoDB calls; an endpoint is set only for local or embedded DynamoDB. */
export const dynamoSettings = {
  AWS_REGION: setting.text().default('us-east-1'),
  DYNAMODB_ENDPOINT: setting.optionalUrl(),
};

/** The ARN of the Secrets Manager secret holding a connection's credentials (lib/secrets); unset locally. */
const secretArn = () =>
  setting.optionalText().refine((value) => value === undefined || /^arn:aws[\w-]*:secretsmanager:/.test(value), {
    error: 'must be a Secrets Manager secret ARN',
  });

/** How to reach RabbitMQ: AMQP for messages, the management API for queue listings. */
export const rabbitSettings = {
  AMQP_URL: setting.url(),
  RABBITMQ_MANAGEMENT_URL: setting.url(),
  RABBITMQ_VHOST: setting.text().default('/'),
  RABBITMQ_SECRET_ARN: secretArn(),
};

/** How to reach the NXRG registry and OpenXDS repository databases. */
export const postgresSettings = {
  NXRG_DATABASE_URL: setting.url(),
  NXRG_DATABASE_SECRET_ARN: secretArn(),
  OPENXDS_DATABASE_URL: setting.url(),
  OPENXDS_DATABASE_SECRET_ARN: secretArn(),
};

/**
 * How a function asks for a distribution pass sooner than the schedule (docs/distributor.md "Passes
 * on demand"): an asynchronous invoke of the distributor, debounced by its lease item. Without a
 * function name passes run on the schedule alone.
 */
export const passRequestSettings = {
  DISTRIBUTOR_FUNCTION_NAME: setting.optionalText(),
  /** A Lambda endpoint URL, only for the local stack and the benches. */
  LAMBDA_ENDPOINT: setting.optionalUrl(),
  /** A requested pass that has not taken its target's lease this long after it was due is presumed lost. */
  DISTRIBUTOR_REQUEST_GRACE_MS: setting.int(10_000, 1_000, 300_000),
};

export type PassRequestConfig = DynamoConfig & {
  DISTRIBUTOR_TABLE?: string;
} & z.infer<z.ZodObject<typeof passRequestSettings>>;

export type DynamoConfig = z.infer<z.ZodObject<typeof dynamoSettings>>;
