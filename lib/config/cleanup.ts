import { z } from 'zod';
import { dynamoSettings, postgresSettings } from './common';
import { parseEnv, setting, type Env } from './env';

/** The cleanup jobs' settings, read from the environment once at cold start (names as in serverless.yml). */
export const cleanupConfigSchema = z.object({
  ...dynamoSettings,
  ...postgresSettings,
  CLEANUP_TABLE: setting.text(),
  CLEANUP_DRY_RUN: setting.bool(false),
});

export type CleanupConfig = z.infer<typeof cleanupConfigSchema>;

export const loadCleanupConfig = (env: Env): CleanupConfig => parseEnv(cleanupConfigSchema, env);
