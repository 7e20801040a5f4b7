import { z } from 'zod';
import { type Env, parseEnv, setting } from '../platform/config/env';
import { POSTGRES_TIMEOUT_DEFAULT_SECONDS } from '../platform/network-bounds';
import { dynamoSettings, postgresSettings } from '../settings/common';

/** The cleanup jobs' settings, read from the environment once at cold start (names as in serverless.yml). */
export const cleanupConfigSchema = z
  .object({
    ...dynamoSettings,
    ...postgresSettings,
    CLEANUP_TABLE: setting.text(),
    CLEANUP_DRY_RUN: setting.bool(false),
    /** Attempts before an operation is set aside in the job's dead-letter partition. */
    CLEANUP_MAX_ATTEMPTS: setting.int(5, 1, 100),
    /** The function's timeout (serverless.yml sets both from one param); the settings below are checked against it. */
    CLEANUP_FUNCTION_TIMEOUT_SECONDS: setting.int(120, 1, 900),
    /** How long a claim on an operation holds; at least the function's timeout, so a live step never loses it. */
    CLEANUP_LEASE_SECONDS: setting.int(300, 10, 86_400),
    /** Steps one invocation may take (SPEC §4 says one; more drains a large stack faster). */
    CLEANUP_STEPS_PER_INVOCATION: setting.int(1, 1, 10_000),
    /** No new step starts once an invocation has run this long; below the function's timeout. */
    CLEANUP_TIME_BUDGET_SECONDS: setting.int(45, 1, 900),
    /** Cap on one operation's JSON payload; DynamoDB items hold at most 400 KB. */
    CLEANUP_MAX_PAYLOAD_BYTES: setting.int(350_000, 1_024, 390_000),
    /** A database statement or connection attempt that takes longer fails; below the function's timeout. */
    CLEANUP_DATABASE_TIMEOUT_SECONDS: setting.int(POSTGRES_TIMEOUT_DEFAULT_SECONDS, 1, 900),
  })
  .superRefine((config, ctx) => {
    const timeout = config.CLEANUP_FUNCTION_TIMEOUT_SECONDS;
    const refuse = (setting: keyof typeof config, message: string) =>
      ctx.addIssue({ code: 'custom', path: [setting], message });
    // A claim that expires while its step still runs lets a second step run the same operation.
    if (config.CLEANUP_LEASE_SECONDS < timeout) {
      refuse('CLEANUP_LEASE_SECONDS', `must be at least CLEANUP_FUNCTION_TIMEOUT_SECONDS (${timeout})`);
    }
    if (config.CLEANUP_TIME_BUDGET_SECONDS > timeout) {
      refuse('CLEANUP_TIME_BUDGET_SECONDS', `must be at most CLEANUP_FUNCTION_TIMEOUT_SECONDS (${timeout})`);
    }
    if (config.CLEANUP_DATABASE_TIMEOUT_SECONDS >= timeout) {
      refuse('CLEANUP_DATABASE_TIMEOUT_SECONDS', `must be below CLEANUP_FUNCTION_TIMEOUT_SECONDS (${timeout})`);
    }
  });

export type CleanupConfig = z.infer<typeof cleanupConfigSchema>;

export const loadCleanupConfig = (env: Env): CleanupConfig => parseEnv(cleanupConfigSchema, env);
