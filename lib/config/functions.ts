import { z } from 'zod';
import { dynamoSettings, postgresSettings, rabbitSettings } from './common';
import { parseEnv, setting, type Env } from './env';

/**
 * Each function's settings, read from the environment once at cold start.
 * Names match `provider.environment` / `functions.*.environment` in serverless.yml.
 */
export const routerConfigSchema = z.object({
  ...dynamoSettings,
  ...rabbitSettings,
  TENANT_TABLE: setting.text(),
});

export const distributorConfigSchema = z.object({
  ...dynamoSettings,
  ...rabbitSettings,
  DISTRIBUTOR_TABLE: setting.text(),
});

export const cleanupConfigSchema = z.object({
  ...dynamoSettings,
  ...postgresSettings,
  CLEANUP_TABLE: setting.text(),
  CLEANUP_DRY_RUN: setting.bool(false),
});

export type RouterConfig = z.infer<typeof routerConfigSchema>;
export type DistributorConfig = z.infer<typeof distributorConfigSchema>;
export type CleanupConfig = z.infer<typeof cleanupConfigSchema>;

export const loadRouterConfig = (env: Env): RouterConfig => parseEnv(routerConfigSchema, env);
export const loadDistributorConfig = (env: Env): DistributorConfig => parseEnv(distributorConfigSchema, env);
export const loadCleanupConfig = (env: Env): CleanupConfig => parseEnv(cleanupConfigSchema, env);
