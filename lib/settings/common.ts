import { z } from 'zod';
import type { DynamoClientSettings } from '../platform/aws/dynamo';
import { parseEnv, setting } from '../platform/config/env';
import { urlProblem } from '../platform/config/url';
import { amqpVhost } from '../rabbitmq/amqp-url';
import { isDotSegment } from '../rabbitmq/api-path';

/** Where the AWS SDK sends DynamoDB calls; an endpoint is set only for local or embedded DynamoDB. */
export const dynamoSettings = {
  AWS_REGION: setting.text().default('us-east-1'),
  DYNAMODB_ENDPOINT: setting.optionalUrl(['http', 'https']),
};

/** The ARN of the Secrets Manager secret holding a connection's credentials (lib/platform/secrets); unset locally. */
const secretArn = () =>
  setting.optionalText().refine((value) => value === undefined || /^arn:aws[\w-]*:secretsmanager:/.test(value), {
    error: 'must be a Secrets Manager secret ARN',
  });

const AMQP_SCHEMES = ['amqp', 'amqps'];

/** How to reach RabbitMQ: AMQP for messages, the management API for queue listings. */
export const rabbitSettings = {
  AMQP_URL: setting.url(AMQP_SCHEMES),
  RABBITMQ_MANAGEMENT_URL: setting.url(['http', 'https']),
  RABBITMQ_VHOST: setting.textOr('/').refine((vhost) => !isDotSegment(vhost), {
    error: 'must not be "." or ".." (the management API cannot address it)',
  }),
  RABBITMQ_SECRET_ARN: secretArn(),
};

/**
 * The vhost rule: the AMQP connection must open RABBITMQ_VHOST, the vhost the management API is
 * asked about. Otherwise the router stages messages in one vhost and the distributor looks in another.
 * Neither vhost is quoted: in a mistyped URL the "vhost" is often the user name and password.
 */
export function checkVhostRule(config: { AMQP_URL: string; RABBITMQ_VHOST: string }, ctx: z.RefinementCtx): void {
  // An unreadable URL is refused by its own setting already.
  if (urlProblem(config.AMQP_URL, AMQP_SCHEMES) !== undefined) return;
  if (amqpVhost(config.AMQP_URL) === config.RABBITMQ_VHOST) return;
  ctx.addIssue({
    code: 'custom',
    path: ['AMQP_URL'],
    message:
      'opens a vhost other than RABBITMQ_VHOST: both must name the same vhost ' +
      '(the URL path is the vhost, percent-encoded: %2F for "/", none for the default "/")',
  });
}

/** How to reach the NXRG registry and OpenXDS repository databases. */
export const postgresSettings = {
  NXRG_DATABASE_URL: setting.url(['postgres', 'postgresql']),
  NXRG_DATABASE_SECRET_ARN: secretArn(),
  OPENXDS_DATABASE_URL: setting.url(['postgres', 'postgresql']),
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
  LAMBDA_ENDPOINT: setting.optionalUrl(['http', 'https']),
  /** A requested pass that has not taken its target's lease this long after it was due is presumed lost. */
  DISTRIBUTOR_REQUEST_GRACE_MS: setting.int(10_000, 1_000, 300_000),
};

export type PassRequestConfig = DynamoConfig & {
  DISTRIBUTOR_TABLE?: string;
} & z.infer<z.ZodObject<typeof passRequestSettings>>;

/** The pass-request settings (lib/work-board/settings.ts) from a function's configuration. */
export const passRequestSettingsOf = (config: PassRequestConfig) => ({
  table: config.DISTRIBUTOR_TABLE,
  functionName: config.DISTRIBUTOR_FUNCTION_NAME,
  graceMs: config.DISTRIBUTOR_REQUEST_GRACE_MS,
  region: config.AWS_REGION,
  lambdaEndpoint: config.LAMBDA_ENDPOINT,
});

export type DynamoConfig = z.infer<z.ZodObject<typeof dynamoSettings>>;

/** The DynamoDB client's settings (lib/platform/aws/dynamo.ts) from a function's configuration. */
export const dynamoClientSettings = (config: DynamoConfig): DynamoClientSettings => ({
  region: config.AWS_REGION,
  endpoint: config.DYNAMODB_ENDPOINT,
});

/** The Lambda maximum timeout: no router batch runs longer, whatever the function's own timeout. */
export const LONGEST_ROUTER_BATCH_SECONDS = 900;
/** Room for clock skew between the router's and the distributor's clocks, and a publish still on its way. */
export const REAP_MARGIN_SECONDS = 60;

/**
 * The staging-queue registry and lifecycle (docs/router.md "Staging-queue lifecycle"), read by the
 * router and the distributor alike, so that each checks the reap rule against the other's period.
 */
export const stagingLifecycleSettings = {
  /** The staging-queue registry (infra/dynamodb.yml StagingQueuesTable); unset: no records, and nothing is reaped. */
  STAGING_TABLE: setting.optionalText(),
  /** How often, at most, a router container touches the record of a staging queue it publishes to. */
  STAGING_TOUCH_SECONDS: setting.int(600, 1, 3600),
  /** A staging queue empty and untouched this long is deleted; 0 never deletes one. */
  DISTRIBUTOR_REAP_AFTER_SECONDS: setting.int(3600, 0),
};

export type StagingLifecycleConfig = z.infer<z.ZodObject<typeof stagingLifecycleSettings>>;

/**
 * Fail closed: a reap period shorter than a router's touch period plus its longest batch could let
 * the reaper delete a queue a router still publishes to without touching (docs/router.md).
 */
export function checkStagingLifecycle(config: StagingLifecycleConfig, ctx: z.RefinementCtx): void {
  const reapAfter = config.DISTRIBUTOR_REAP_AFTER_SECONDS;
  if (reapAfter === 0) return;
  const least = config.STAGING_TOUCH_SECONDS + LONGEST_ROUTER_BATCH_SECONDS + REAP_MARGIN_SECONDS;
  if (reapAfter < least) {
    ctx.addIssue({
      code: 'custom',
      path: ['DISTRIBUTOR_REAP_AFTER_SECONDS'],
      message: `must be 0 or at least ${least} (STAGING_TOUCH_SECONDS + ${LONGEST_ROUTER_BATCH_SECONDS} s of the longest router batch + ${REAP_MARGIN_SECONDS} s)`,
    });
  }
}

/**
 * Direct routing under a grant (docs/distributor.md "Direct routing under a grant"), read by the
 * router and the distributor alike, so that each checks the windows against the other's.
 */
export const directRoutingSettings = {
  /** `off` (default): the router stages every message (SPEC §2). `granted`: it may publish to a target an execution granted. */
  DIRECT_ROUTING: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.enum(['off', 'granted'], { error: 'must be one of off, granted' }).default('off'),
  ),
  /** The router publishes direct only while the target's ready depth and the batch's direct messages stay within this. */
  DIRECT_ROUTING_MAX_DEPTH: setting.int(20, 1, 1_000_000),
  /** How long an execution's grant lasts. */
  DIRECT_ROUTING_GRANT_SECONDS: setting.int(300, 1, 3_600),
  /** A router uses a grant read at most this long ago, and starts no direct publish later than its read + this. */
  DIRECT_ROUTING_READ_MS: setting.int(1_000, 10, 30_000),
  /** A direct publish not confirmed within this fails its record (SQS retries it): the revocation wait relies on it. */
  DIRECT_ROUTING_PUBLISH_MS: setting.int(1_000, 10, 30_000),
};

export type DirectRoutingConfig = z.infer<z.ZodObject<typeof directRoutingSettings>>;

/**
 * Fail closed: a grant must outlast a router's read and publish windows (a router uses a grant only
 * while it has both ahead of it), and an execution must wait out both after a revocation.
 */
export function checkDirectRouting(
  config: DirectRoutingConfig & { DISTRIBUTOR_WAIT_BOUND_MS?: number },
  ctx: z.RefinementCtx,
): void {
  const windowsMs = config.DIRECT_ROUTING_READ_MS + config.DIRECT_ROUTING_PUBLISH_MS;
  if (config.DIRECT_ROUTING_GRANT_SECONDS * 1000 <= windowsMs) {
    ctx.addIssue({
      code: 'custom',
      path: ['DIRECT_ROUTING_GRANT_SECONDS'],
      message: `must be longer than DIRECT_ROUTING_READ_MS + DIRECT_ROUTING_PUBLISH_MS (${windowsMs} ms): a router uses a grant only with both ahead of it`,
    });
  }
  const bound = config.DISTRIBUTOR_WAIT_BOUND_MS;
  if (config.DIRECT_ROUTING === 'granted' && bound !== undefined && windowsMs > bound) {
    ctx.addIssue({
      code: 'custom',
      path: ['DIRECT_ROUTING_READ_MS'],
      message: `with DIRECT_ROUTING_PUBLISH_MS (${windowsMs} ms together) must be at most DISTRIBUTOR_WAIT_BOUND_MS (${bound}): an execution waits that long after revoking a grant`,
    });
  }
}

/** The direct-routing windows as both parts read them. */
export const directRoutingOf = (config: DirectRoutingConfig) => ({
  mode: config.DIRECT_ROUTING,
  maxDepth: config.DIRECT_ROUTING_MAX_DEPTH,
  grantMs: config.DIRECT_ROUTING_GRANT_SECONDS * 1000,
  readMs: config.DIRECT_ROUTING_READ_MS,
  publishMs: config.DIRECT_ROUTING_PUBLISH_MS,
});

/** Direct routing as an environment that sets none of it gets it: off, the default windows. */
export const directRoutingDefaults = () => directRoutingOf(parseEnv(z.object(directRoutingSettings), {}));
