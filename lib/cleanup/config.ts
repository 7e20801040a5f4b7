import { z } from 'zod';
import { type Env, parseEnv, setting } from '../platform/config';
import { POSTGRES_TIMEOUT_DEFAULT_SECONDS } from '../platform/network-bounds';
import { dynamoSettings, postgresSettings } from '../settings/common';

/** The cleanup jobs' settings, read from the environment once at cold start (names as in serverless.yml). */
export const cleanupConfigSchema = z.object({
  ...dynamoSettings,
  ...postgresSettings,
  CLEANUP_TABLE: setting.text(),
  CLEANUP_DRY_RUN: setting.bool(false),
  /** The function's timeout (serverless.yml sets both from one param); the lease, budget and database timeout follow it. */
  CLEANUP_FUNCTION_TIMEOUT_SECONDS: setting.int(120, 10, 900),
});

/**
 * What the cleanup engine fixes or derives from the function's timeout instead of reading it
 * (docs/configuration.md "Fixed values"). Tests pass other values to `loadCleanupConfig`; no
 * environment variable reaches them.
 */
export interface EngineTuning {
  /** Attempts before an operation is set aside in the job's dead-letter partition. */
  maxAttempts: number;
  /** Cap on one operation's JSON payload: DynamoDB items hold at most 400 KB, with room for the item's own fields. */
  maxPayloadBytes: number;
  /** Steps one invocation takes: one, as SPEC §4 says (a step uses its time budget; the schedule brings the next). */
  stepsPerInvocation: number;
  /** How long a claim on an operation holds: the timeout + 3 minutes, so a live step never loses it (clock skew). */
  leaseMs: number;
  /** No new step starts once an invocation has run this long: 45 s, or less so a step begun then ends within the timeout. */
  timeBudgetMs: number;
  /** A database statement or connection attempt that takes longer fails: 30 s, at most half the timeout. */
  databaseTimeoutMs: number;
}

/** The engine's fixed and derived values for a function timeout of `timeoutSeconds`. */
export function engineTuning(timeoutSeconds: number): EngineTuning {
  const databaseSeconds = Math.min(POSTGRES_TIMEOUT_DEFAULT_SECONDS, Math.floor(timeoutSeconds / 2));
  return {
    maxAttempts: 5,
    maxPayloadBytes: 350_000,
    stepsPerInvocation: 1,
    leaseMs: (timeoutSeconds + 180) * 1000,
    timeBudgetMs: Math.min(45, timeoutSeconds - databaseSeconds) * 1000,
    databaseTimeoutMs: databaseSeconds * 1000,
  };
}

export type CleanupConfig = z.infer<typeof cleanupConfigSchema> & { readonly tuning: EngineTuning };

/** The checked configuration; `tuning` replaces fixed values for a test or bench (never from the environment). */
export function loadCleanupConfig(env: Env, tuning: Partial<EngineTuning> = {}): CleanupConfig {
  const config = parseEnv(cleanupConfigSchema, env);
  return { ...config, tuning: { ...engineTuning(config.CLEANUP_FUNCTION_TIMEOUT_SECONDS), ...tuning } };
}
