import { z } from 'zod';
import type { DynamoClientSettings } from '../platform/aws';
import { amqpVhost, setting, urlProblem } from '../platform/config';
import { isDotSegment } from '../rabbitmq/management';

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
};

/**
 * A requested pass that has not taken its target's lease this long after it was due is presumed
 * lost and asked for again: ten times a loaded execution's start (about a second), a sixth of the schedule.
 */
export const REQUEST_GRACE_MS = 10_000;

export type PassRequestConfig = DynamoConfig & {
  DISTRIBUTOR_TABLE?: string;
} & z.infer<z.ZodObject<typeof passRequestSettings>>;

/** The pass-request settings (lib/work-board/pass-trigger.ts) from a function's configuration. */
export const passRequestSettingsOf = (config: PassRequestConfig, graceMs = REQUEST_GRACE_MS) => ({
  table: config.DISTRIBUTOR_TABLE,
  functionName: config.DISTRIBUTOR_FUNCTION_NAME,
  graceMs,
  region: config.AWS_REGION,
  lambdaEndpoint: config.LAMBDA_ENDPOINT,
});

export type DynamoConfig = z.infer<z.ZodObject<typeof dynamoSettings>>;

/** The DynamoDB client's settings (lib/platform/aws.ts) from a function's configuration. */
export const dynamoClientSettings = (config: DynamoConfig): DynamoClientSettings => ({
  region: config.AWS_REGION,
  endpoint: config.DYNAMODB_ENDPOINT,
});

/** The Lambda maximum timeout: no router batch runs longer, whatever the function's own timeout. */
export const LONGEST_ROUTER_BATCH_SECONDS = 900;
/** Room for clock skew between the router's and the distributor's clocks, and a publish still on its way. */
export const REAP_MARGIN_SECONDS = 60;

/** How often, at most, a router container touches the record of a staging queue it publishes to. */
export const STAGING_TOUCH_MS = 600_000;
/**
 * A staging queue empty and untouched this long is deleted: at least a router's touch period, its
 * longest batch and the margin (a reaper never deletes a queue a router still publishes to), rounded up to an hour.
 */
export const REAP_AFTER_MS = 3_600_000;

/** The staging-queue registry (docs/router.md "Staging-queue lifecycle"), read by the router and the distributor alike. */
export const stagingLifecycleSettings = {
  /** The staging-queue registry (infra/dynamodb.yml StagingQueuesTable); unset: no records, and nothing is reaped. */
  STAGING_TABLE: setting.optionalText(),
};

/** `off`, `granted`, or either with the router's concurrency after a colon (what serverless.yml gives the distributor). */
const DIRECT_ROUTING_VALUE = /^(off|granted)(?::([1-9]\d{0,5}))?$/;

/**
 * Direct routing under a grant (docs/distributor.md "Direct routing under a grant"), read by the
 * router and the distributor alike.
 */
export const directRoutingSettings = {
  /**
   * `granted` (the default wherever the work board is known): a router may publish straight to a
   * target an execution granted. `off`: the router stages every message (SPEC §2). The distributor
   * also reads `:<routers>`, the router function's reserved concurrency (serverless.yml derives it):
   * without it, no target whose length limit drops or dead-letters is granted.
   */
  DIRECT_ROUTING: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .regex(DIRECT_ROUTING_VALUE, {
        error:
          'must be off or granted, optionally followed by ":<routers>", the router function\'s reserved concurrency (a whole number from 1)',
      })
      .optional(),
  ),
};

/**
 * Direct routing's windows, fixed: a grant (5 minutes) outlasts a router's read and publish windows
 * (1 s each), and an execution that revokes one waits both out, within its wait bound (6 s);
 * test/unit/settings/fixed-values.test.ts holds them to it. The depth keeps a granted target's
 * ready messages within what a buffer of a few hundred milliseconds holds.
 */
export const DIRECT_ROUTING_WINDOWS = {
  /** The router publishes direct only while the target's ready depth and the batch's direct messages stay within this. */
  maxDepth: 20,
  /** How long an execution's grant lasts. */
  grantMs: 300_000,
  /** A router uses a grant read at most this long ago, and starts no direct publish later than its read + this. */
  readMs: 1_000,
  /** A direct publish not confirmed within this fails its record (SQS retries it): the revocation wait relies on it. */
  publishMs: 1_000,
};

export type DirectRoutingWindows = typeof DIRECT_ROUTING_WINDOWS;

/** The fixed values the router and the distributor share, in both parts' tuning. */
export const SHARED_TUNING = { requestGraceMs: REQUEST_GRACE_MS, direct: DIRECT_ROUTING_WINDOWS };

type DirectRoutingConfig = z.infer<z.ZodObject<typeof directRoutingSettings>> & {
  readonly DISTRIBUTOR_TABLE?: string | undefined;
  readonly tuning: { readonly direct: DirectRoutingWindows };
};

/**
 * Direct routing as both parts read it: the mode a deployment chose (unset: `granted` where the
 * work board's table is known, else `off`), the routers' bound, the fixed windows.
 */
export const directRoutingOf = (config: DirectRoutingConfig) => {
  const [, mode, routers] = DIRECT_ROUTING_VALUE.exec(config.DIRECT_ROUTING ?? '') ?? [];
  return {
    mode: (mode ?? (config.DISTRIBUTOR_TABLE === undefined ? 'off' : 'granted')) as 'off' | 'granted',
    ...(routers === undefined ? {} : { routers: Number(routers) }),
    ...config.tuning.direct,
  };
};

/** Direct routing as a part with the work board's table and no DIRECT_ROUTING gets it: granted, the routers unknown, the fixed windows. */
export const directRoutingDefaults = () =>
  directRoutingOf({
    DISTRIBUTOR_TABLE: 'work board',
    tuning: { direct: DIRECT_ROUTING_WINDOWS },
  });
