import { z } from 'zod';
import { dynamoSettings, rabbitSettings } from './common';
import { parseEnv, setting, type Env } from './env';

/** The router's settings, read from the environment once at cold start (names as in serverless.yml). */
export const routerConfigSchema = z.object({
  ...dynamoSettings,
  ...rabbitSettings,
  TENANT_TABLE: setting.text(),
});

export type RouterConfig = z.infer<typeof routerConfigSchema>;

export const loadRouterConfig = (env: Env): RouterConfig => parseEnv(routerConfigSchema, env);
