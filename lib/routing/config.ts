import { z } from 'zod';
import { type Env, parseEnv, setting } from '../platform/config';
import {
  checkVhostRule,
  directRoutingSettings,
  dynamoSettings,
  passRequestSettings,
  rabbitSettings,
  SHARED_TUNING,
  STAGING_TOUCH_MS,
  stagingLifecycleSettings,
} from '../settings/common';
import { defaultThresholds, reachableLevels, tenMinusLevel } from './priority/rules';

const thresholdsSchema = z
  .array(z.strictObject({ below: z.number().int(), level: z.number().int().min(0) }))
  .refine((list) => list.every((t, i) => i === 0 || list[i - 1]!.below < t.below), {
    error: 'must be in ascending order of "below"',
  });

const priorityTableSchema = z.record(
  z.string().regex(/^\d+$/, { error: 'keys must be levels' }),
  z.number().int().min(0).max(255),
);

const targetsSchema = z.record(
  z.string(),
  z.strictObject({
    bypassStaging: z.boolean().default(false),
    // Staging queues are never exclusive: transient ones are transient non-exclusive queues,
    // which RabbitMQ 4.3 refuses to declare (and any broker loses, messages and all, on a restart).
    durable: z
      .literal(true, {
        error: '"durable" must be true or left out: RabbitMQ 4.3 refuses transient (non-durable) non-exclusive queues',
      })
      .optional(),
    arguments: z.record(z.string(), z.json()).optional(),
  }),
);

/** The router's settings, read from the environment once at cold start (names as in serverless.yml). */
export const routerConfigSchema = z
  .object({
    ...dynamoSettings,
    ...rabbitSettings,
    ...passRequestSettings,
    ...stagingLifecycleSettings,
    ...directRoutingSettings,
    TENANT_TABLE: setting.text(),
    /** The distributor's lease table, where the router asks for passes (with DISTRIBUTOR_FUNCTION_NAME). */
    DISTRIBUTOR_TABLE: setting.optionalText(),
    /** SPEC §1: a check more than this many seconds after the last one resets the tenant. */
    TENANT_PRIORITY_RESET_SECONDS: setting.int(1500, 1),
    /** SPEC §1's table as `[{"below": -20, "level": 9}, …]`, ascending; the first that holds wins. */
    TENANT_PRIORITY_THRESHOLDS: setting.json(thresholdsSchema, [...defaultThresholds]),
    /** The level of a count below no threshold. */
    TENANT_PRIORITY_QUIET_LEVEL: setting.int(1, 0),
    /** Level → AMQP priority; RabbitMQ delivers a larger priority first. Default 10 − level. */
    TENANT_PRIORITY_AMQP_PRIORITIES: setting.json(
      priorityTableSchema,
      Object.fromEntries(
        defaultThresholds
          .map((t) => t.level)
          .concat(1)
          .map((l) => [String(l), tenMinusLevel(l)]),
      ),
    ),
    /** Per target queue: `{"name": {"bypassStaging": true}}`, or the shape of its staging queues. */
    ROUTER_TARGETS: setting.json(targetsSchema, {}),
    /**
     * A message without a tenant: `route` (default, upstream's behaviour) stages it by workflow alone
     * (`target»/workflow`), or publishes it straight to its target when it has no workflow either, at
     * the quiet level; `reject` fails it (it ends in the dead-letter queue).
     */
    ROUTER_MISSING_TENANT: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.enum(['route', 'reject'], { error: 'must be one of route, reject' }).default('route'),
    ),
    /**
     * `none` (default): a staging queue has no `x-max-priority`, which costs the broker about five
     * times the memory per queue; the priority stays on each message and takes effect in the target.
     * `copy`: staging queues copy their target's `x-max-priority` (docs/router.md "Staging queues").
     */
    ROUTER_STAGING_PRIORITIES: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.enum(['none', 'copy'], { error: 'must be one of none, copy' }).default('none'),
    ),
  })
  .superRefine((config, ctx) => {
    if (config.DISTRIBUTOR_FUNCTION_NAME !== undefined && config.DISTRIBUTOR_TABLE === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['DISTRIBUTOR_TABLE'],
        message: 'is required with DISTRIBUTOR_FUNCTION_NAME (the router asks for passes in that table)',
      });
    }
    checkVhostRule(config, ctx);
    if (config.DIRECT_ROUTING?.startsWith('granted') && config.DISTRIBUTOR_TABLE === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['DISTRIBUTOR_TABLE'],
        message: 'is required with DIRECT_ROUTING=granted (the router reads the grants on its work board)',
      });
    }
    const rules = { thresholds: config.TENANT_PRIORITY_THRESHOLDS, quietLevel: config.TENANT_PRIORITY_QUIET_LEVEL };
    const missing = reachableLevels(rules).filter(
      (level) => config.TENANT_PRIORITY_AMQP_PRIORITIES[String(level)] === undefined,
    );
    if (missing.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['TENANT_PRIORITY_AMQP_PRIORITIES'],
        message: `has no priority for level ${missing.join(', ')}`,
      });
    }
  });

/**
 * What the router fixes instead of reading it (docs/configuration.md "Fixed values"). Tests pass
 * shorter ones to `loadRouterConfig`; no environment variable reaches them.
 */
export const ROUTER_TUNING = {
  /** A declared staging queue, a target's shape and the vhost's policies are remembered this long: the broker changes them rarely. */
  stagingQueueCacheMs: 60_000,
  /** A batch's publishes not confirmed within this fail its records (SQS retries them): a third of the function's 30 s timeout. */
  confirmTimeoutMs: 10_000,
  stagingTouchMs: STAGING_TOUCH_MS,
  ...SHARED_TUNING,
};

export type RouterTuning = typeof ROUTER_TUNING;

export type RouterConfig = z.infer<typeof routerConfigSchema> & { readonly tuning: RouterTuning };

/**
 * The skip window of the tenant counters (docs/router.md "Tenant counters"): a container answers a
 * saturated tenant's checks this long after its last write of it without a write. A 25th of the
 * reset interval, at most a minute: a saturated tenant then resets at most that much early.
 */
export function skipWindowMsOf(config: RouterConfig): number {
  return Math.min(60, Math.floor(config.TENANT_PRIORITY_RESET_SECONDS / 25)) * 1000;
}

/** The checked configuration; `tuning` replaces fixed values for a test or bench (never from the environment). */
export const loadRouterConfig = (env: Env, tuning: Partial<RouterTuning> = {}): RouterConfig => ({
  ...parseEnv(routerConfigSchema, env),
  tuning: { ...ROUTER_TUNING, ...tuning },
});
