import { z } from 'zod';
import { checkVhostRule, dynamoSettings, rabbitSettings } from './common';
import { type Env, parseEnv, setting } from './env';

const queueArguments = z.record(z.string(), z.unknown());

/** Per-target settings, keyed by target queue name. */
const targetSettings = z.record(
  z.string(),
  z.strictObject({
    /** Used when the target has no `x-max-length` argument. */
    maxLength: z.number().int().min(0).optional(),
    /** Arguments a missing target is created with (DISTRIBUTOR_MISSING_TARGET=create). */
    arguments: queueArguments.optional(),
  }),
);

/** Weights by staging queue name pattern; the first pattern that matches wins, unmatched queues weigh 1. */
const weightSettings = z.array(
  z.strictObject({ pattern: z.string().min(1), weight: z.number().int().min(1).max(1000) }),
);

const choice = <T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.enum(values, { error: `must be one of ${values.join(', ')}` }).default(fallback as never),
  );

/** The distributor's settings, each on its own (the queue view of the CLI uses them without AMQP). */
export const distributorSettingsSchema = z.object({
  ...dynamoSettings,
  ...rabbitSettings,
  DISTRIBUTOR_TABLE: setting.text(),
  /** `fair`: max-min water-filling; `reference`: ceil(capacity / N) per queue, as the reference implementation. */
  DISTRIBUTOR_PLANNER: choice(['fair', 'reference'] as const, 'fair'),
  DISTRIBUTOR_DEFAULT_MAX_LENGTH: setting.int(1000, 0),
  DISTRIBUTOR_TARGETS: setting.json(targetSettings, {}),
  DISTRIBUTOR_WEIGHTS: setting.json(weightSettings, []),
  /** A target whose free room is below this percentage of its max length is left alone this pass. */
  DISTRIBUTOR_REFILL_THRESHOLD_PERCENT: setting.int(10, 0, 100),
  DISTRIBUTOR_MISSING_TARGET: choice(['skip', 'create'] as const, 'skip'),
  /** Arguments of a target created for staging queues that have none, unless DISTRIBUTOR_TARGETS names some. */
  DISTRIBUTOR_NEW_TARGET_ARGUMENTS: setting.json(queueArguments, { 'x-max-priority': 9 }),
  /** How many staging queues move at the same time within a pass. */
  DISTRIBUTOR_MOVE_CONCURRENCY: setting.int(4, 1, 64),
  /** Upper bound of a mover's prefetch (it is also never more than the queue's share). */
  DISTRIBUTOR_MAX_PREFETCH: setting.int(500, 1, 65535),
  /** The pass stops moving this long before the Lambda timeout. */
  DISTRIBUTOR_SAFETY_MARGIN_MS: setting.int(10_000, 0),
  /** A mover that received nothing for this long stops (its queue was drained by someone else). */
  DISTRIBUTOR_IDLE_STOP_MS: setting.int(2_000, 50),
});

/** The distributor's settings, read from the environment once at cold start (names as in serverless.yml). */
export const distributorConfigSchema = distributorSettingsSchema.superRefine(checkVhostRule);

export type DistributorConfig = z.infer<typeof distributorConfigSchema>;

export const loadDistributorConfig = (env: Env): DistributorConfig => parseEnv(distributorConfigSchema, env);
