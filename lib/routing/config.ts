import { z } from 'zod';
import { type Env, parseEnv, setting } from '../platform/config/env';
import {
  checkDirectRouting,
  checkStagingLifecycle,
  checkVhostRule,
  directRoutingSettings,
  dynamoSettings,
  passRequestSettings,
  rabbitSettings,
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
    /**
     * A container answers a saturated tenant's checks within this many seconds of its last write of
     * it without a write (docs/router.md, "Tenant counters"); 0 writes every check. At most a tenth
     * of the reset interval; unset: 60, or a 25th of the interval if that is less.
     */
    TENANT_PRIORITY_SKIP_WINDOW_SECONDS: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.coerce
        .number({ error: 'must be an integer' })
        .int({ error: 'must be an integer' })
        .min(0, { error: 'must be at least 0' })
        .optional(),
    ),
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
    /** How long a declared staging queue, a target's shape and the vhost's policies are remembered. */
    STAGING_QUEUE_CACHE_SECONDS: setting.int(60, 0),
    /** How long to wait for the broker to confirm a batch's publishes. */
    PUBLISH_CONFIRM_TIMEOUT_MS: setting.int(10_000, 100),
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
    checkStagingLifecycle(config, ctx);
    checkDirectRouting(config, ctx);
    if (config.DIRECT_ROUTING === 'granted' && config.DISTRIBUTOR_TABLE === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['DISTRIBUTOR_TABLE'],
        message: 'is required with DIRECT_ROUTING=granted (the router reads the grants on its work board)',
      });
    }
    const skip = config.TENANT_PRIORITY_SKIP_WINDOW_SECONDS;
    if (skip !== undefined && skip * 10 > config.TENANT_PRIORITY_RESET_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['TENANT_PRIORITY_SKIP_WINDOW_SECONDS'],
        message:
          'must be at most a tenth of TENANT_PRIORITY_RESET_SECONDS (a saturated tenant may reset that much early)',
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

export type RouterConfig = z.infer<typeof routerConfigSchema>;

/** The skip window of the tenant counters, its default following the reset interval. */
export function skipWindowMsOf(config: RouterConfig): number {
  const seconds =
    config.TENANT_PRIORITY_SKIP_WINDOW_SECONDS ?? Math.min(60, Math.floor(config.TENANT_PRIORITY_RESET_SECONDS / 25));
  return seconds * 1000;
}

export const loadRouterConfig = (env: Env): RouterConfig => parseEnv(routerConfigSchema, env);
