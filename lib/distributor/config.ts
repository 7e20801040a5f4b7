import { RE2JS } from 're2js';
import { z } from 'zod';
import { type Env, parseEnv, setting } from '../platform/config';
import {
  checkVhostRule,
  directRoutingSettings,
  dynamoSettings,
  passRequestSettings,
  REAP_AFTER_MS,
  rabbitSettings,
  SHARED_TUNING,
  stagingLifecycleSettings,
} from '../settings/common';
import type { FollowUpSettings } from './planning/budget';
import type { BufferSettings } from './planning/capacity';
import type { TargetPlanSettings } from './planning/target-plan';
import { fairByError, WEIGHT_DECIMALS, type WeightRule } from './planning/weights';

const queueArguments = z.record(z.string(), z.unknown());

/**
 * Upstream's tuned target queue length, per target: length = consumption rate × goalSeconds,
 * rounded to `roundTo`, clamped to [minLength, maxLength], moved at most `maxStepPercent` a pass.
 * `noop` logs what it would set and changes nothing (upstream's CAF_NOOP_MODE).
 */
const tunedLengthSettings = z
  .strictObject({
    goalSeconds: z.number().positive(),
    minLength: z.number().int().min(1),
    maxLength: z.number().int().min(1),
    maxStepPercent: z.number().int().min(1).max(100).default(25),
    roundTo: z.number().int().min(1).default(10),
    /** The management API's rate window: the consumption rate is the average over this many seconds. */
    rateWindowSeconds: z.number().int().min(5).max(3600).default(60),
    mode: z.enum(['apply', 'noop']).default('apply'),
  })
  .refine((t) => t.minLength <= t.maxLength, { error: 'tunedLength.minLength must not exceed maxLength' });

/** Per-target settings, keyed by target queue name. */
const targetSettings = z.record(
  z.string(),
  z.strictObject({
    /** Used when the target has no `x-max-length` argument. */
    maxLength: z.number().int().min(0).optional(),
    /** Arguments a missing target is created with (DISTRIBUTOR_MISSING_TARGET=create). */
    arguments: queueArguments.optional(),
    /** Tune the target's length to a processing-time goal from its consumption rate (off when absent). */
    tunedLength: tunedLengthSettings.optional(),
    /** `false`: no target buffer, the target is filled to its max length (a throughput-only queue). */
    buffer: z.boolean().optional(),
  }),
);

/** A weight from 0 (no share) to 1000, with at most WEIGHT_DECIMALS decimals (upstream allows 0.5 and .5). */
export const weightValue = z
  .number()
  .min(0)
  .max(1000)
  .refine((w) => Number.isInteger(Math.round(w * 10 ** WEIGHT_DECIMALS * 1e6) / 1e6), {
    error: `must have at most ${WEIGHT_DECIMALS} decimals`,
  });

/**
 * A regular expression the distributor's linear-time matcher (RE2, lib/distributor/planning/weights.ts)
 * compiles: upstream's rules do; backreferences and lookaround, which need backtracking, do not.
 */
const regexText = z
  .string()
  .min(1)
  .refine(
    (source) => {
      try {
        RE2JS.compile(source);
        return true;
      } catch {
        return false;
      }
    },
    {
      error:
        'is not a valid regular expression for the linear-time matcher (RE2 syntax: no backreferences or lookaround)',
    },
  );

/**
 * Weights by staging queue name: a glob `pattern` (whole name) or a `regex` (anywhere in the name,
 * as upstream's CAF_ADJUST_QUEUE_WEIGHT). The most specific match wins, a tie goes to the higher
 * weight (lib/distributor/planning/weights.ts); unmatched queues weigh 1.
 */
const weightSettings = z.array(
  z.union([
    z.strictObject({ pattern: z.string().min(1), weight: weightValue }),
    z.strictObject({ regex: regexText, weight: weightValue }),
  ]),
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
  ...passRequestSettings,
  ...stagingLifecycleSettings,
  ...directRoutingSettings,
  DISTRIBUTOR_TABLE: setting.text(),
  /**
   * `tenant`: max-min water-filling among tenants, then within each tenant among its staging queues;
   * `queue`: among staging queues, each its own (as before 2026-12-02); `reference`: ceil(capacity / N)
   * per queue, as the reference implementation. `fair` (the old per-queue name) is refused, naming both.
   */
  DISTRIBUTOR_PLANNER: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .enum(['tenant', 'queue', 'reference'], {
        error: (issue) =>
          issue.input === 'fair'
            ? 'fair was replaced by tenant (shares per tenant, the default) and queue (per staging queue, as fair was)'
            : 'must be one of tenant, queue, reference',
      })
      .default('tenant'),
  ),
  /**
   * What tenants' shares are equal in (`tenant` planner, planning/weights.ts `fairByOf`): `messages`, `bytes`
   * (a message weighs its body size), or `header:<name>[=<cost>]` (the cost the producer declares in
   * that header; a message without a positive number there costs <cost>, 1 when not given).
   */
  DISTRIBUTOR_FAIR_BY: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .default('messages')
      .superRefine((text, ctx) => {
        const error = fairByError(text);
        if (error !== undefined) ctx.addIssue({ code: 'custom', message: error });
      }),
  ),
  ...quietFirstEnv(),
  DISTRIBUTOR_DEFAULT_MAX_LENGTH: setting.int(1000, 0),
  /**
   * The target buffer (docs/distributor.md "Target buffer"): a target's ready messages are kept at
   * what its workers take in this long at the drain rate an execution measures, and refilled at
   * that pace while the target stays busy; a message entering the target waits about this long.
   * 0 turns the buffer off for every target (each is filled to its max length, as before it).
   */
  DISTRIBUTOR_BUFFER_HORIZON_MS: setting.int(250, 0, 60_000),
  DISTRIBUTOR_TARGETS: setting.json(targetSettings, {}),
  DISTRIBUTOR_WEIGHTS: setting.json(weightSettings, []),
  DISTRIBUTOR_MISSING_TARGET: choice(['skip', 'create'] as const, 'skip'),
  /**
   * Arguments of a target created for staging queues that have none, unless DISTRIBUTOR_TARGETS
   * names some. A classic queue by name: on a vhost whose default type is quorum (RabbitMQ 4 on
   * Amazon MQ) a created queue without a type would be quorum, which refuses x-max-priority.
   */
  DISTRIBUTOR_NEW_TARGET_ARGUMENTS: setting.json(queueArguments, { 'x-queue-type': 'classic', 'x-max-priority': 9 }),
  /**
   * Distributor executions in flight at most (docs/distributor.md "Run model"): each serves every
   * target with work, so this does not grow with busy targets. The reserved concurrency is this + 1.
   * At most 10, the slots a router checks (MAX_SLOTS, lib/work-board/work-board.ts).
   */
  DISTRIBUTOR_MAX_EXECUTIONS: setting.int(2, 1, 10),
});

/**
 * The distributor's settings, read from the environment once at cold start (names as in
 * serverless.yml), with the rules between them; tools pick single settings from `distributorSettingsSchema`.
 */
export const distributorConfigSchema = distributorSettingsSchema.superRefine((config, ctx) => {
  checkVhostRule(config, ctx);
});

/**
 * What the distributor fixes or derives instead of reading it (docs/configuration.md "Fixed values"):
 * no deployment had a reason to choose these, and each is bounded by another value or was measured.
 * Tests pass shorter ones to `loadDistributorConfig`; no environment variable reaches them.
 */
export const DISTRIBUTOR_TUNING = {
  /** A target with less free room than this percentage of its max length is left alone: a pass would move a sliver. */
  refillThresholdPercent: 10,
  /** Staging queues moved at once: 5,000 one-message queues took 15.2 s with 4, 9.0 s with 16, no less with 32 (BENCHMARKS.md). */
  moveConcurrency: 16,
  /** A mover's prefetch at most (it is never more than its queue's share either): the bench's best pass ÷ raw pump ratio. */
  maxPrefetch: 500,
  /** A pass stops moving this long before the invocation's end: room to settle its movers and write its report. */
  safetyMarginMs: 10_000,
  /** A mover that received nothing this long stops: its queue was drained by someone else. */
  idleStopMs: 2_000,
  /** A follow-up pass for a target that still has work starts this much later (a batch's worth of routing). */
  followUpDelayMs: 1_000,
  /** Follow-ups after passes that moved nothing back off up to this: below the schedule's minute. */
  followUpMaxDelayMs: 20_000,
  /** With nothing due now, an execution waits this long for a target due and ends otherwise (a tenth of the schedule). */
  waitBoundMs: 6_000,
  /** While an execution waits, it reads the work board this often: a request waits at most this long to be served. */
  boardPollMs: 250,
  /** Targets a pass works on at once; each takes its lease first, so this bounds lease requests too. */
  targetConcurrency: 8,
  /** The backstop lists the vhost at most this often over every execution: the schedule's period. */
  backstopIntervalMs: 60_000,
  /** A target's staging queues and shape serve later passes this long: as the router caches a declared queue. */
  stagingCacheMs: 60_000,
  /** A staging queue with at most this many messages is quiet (DISTRIBUTOR_MOVE_PRIORITY=backlog): top priority. */
  quietBacklog: 10,
  /** With DISTRIBUTOR_MOVE_PRIORITY=backlog, this percentage of a target's max length only quiet queues may fill. */
  quietReservePercent: 5,
  /** A tenant's longest wait in staging over this is a warning and the StagingWaitsOverBound alarm (infra/cloudwatch.yml). */
  waitAlarmSeconds: 60,
  reapAfterMs: REAP_AFTER_MS,
  ...SHARED_TUNING,
};

export type DistributorTuning = typeof DISTRIBUTOR_TUNING;

export type DistributorConfig = z.infer<typeof distributorConfigSchema> & { readonly tuning: DistributorTuning };

// Quiet tenants first (docs/distributor.md): its setting, and its translation for the planner.

/** Declared as a function so that this block stays apart; the schema calls it once, when it is built. */
function quietFirstEnv() {
  return {
    /**
     * `keep`: a moved message keeps the router's priority (SPEC §1). `backlog`: on a target with
     * `x-max-priority`, its priority comes from its staging queue's backlog, and quiet queues are moved first.
     */
    DISTRIBUTOR_MOVE_PRIORITY: choice(['keep', 'backlog'] as const, 'backlog'),
  };
}

/** Quiet tenants first's settings as the planner reads them (QuietFirstSettings in planning/planner.ts). */
export const quietFirstSettingsOf = (config: DistributorConfig) => ({
  movePriority: config.DISTRIBUTOR_MOVE_PRIORITY,
  quietBacklog: config.tuning.quietBacklog,
  reservePercent: config.tuning.quietReservePercent,
});

/** The checked configuration; `tuning` replaces fixed values for a test or bench (never from the environment). */
export const loadDistributorConfig = (env: Env, tuning: Partial<DistributorTuning> = {}): DistributorConfig => ({
  ...parseEnv(distributorConfigSchema, env),
  tuning: { ...DISTRIBUTOR_TUNING, ...tuning },
});

/**
 * The distributor's settings as its code reads them, translated once from the configuration by
 * the composition root (service.ts `distributorSettings`); no environment-variable name below it.
 */
export interface DistributorSettings extends TargetPlanSettings, FollowUpSettings {
  /** Weight rules by staging queue name (planning/weights.ts). */
  weights: readonly WeightRule[];
  /** How many staging queues move at the same time within a pass. */
  moveConcurrency: number;
  /** Upper bound of a mover's prefetch (it is also never more than the queue's share). */
  maxPrefetch: number;
  /** The pass stops moving this long before the invocation's timeout. */
  safetyMarginMs: number;
  /** A mover that received nothing for this long stops (its queue was drained by someone else). */
  idleStopMs: number;
  /** Targets a pass works on at once (each takes its lease first, so lease requests are bounded too). */
  targetConcurrency: number;
  /** The target buffer (bufferDepth in planning/capacity.ts), for every target whose settings do not turn it off. */
  buffer: BufferSettings;
}

/** How executions follow the work board (docs/distributor.md "Run model"). */
export interface RunModelSettings {
  /** Executions in flight at most, whatever the number of busy targets. */
  maxExecutions: number;
  /** With nothing due now, an execution waits for a target due within this long, and ends otherwise. */
  waitBoundMs: number;
  /** While it waits, it reads the board this often (requests written meanwhile are served then). */
  boardPollMs: number;
  /** The backstop lists the vhost at most this often over every execution. */
  backstopIntervalMs: number;
  /** A target's registry read and shape serve the container's later passes this long. */
  stagingCacheMs: number;
  safetyMarginMs: number;
}
