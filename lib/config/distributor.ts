import { z } from 'zod';
import { dynamoSettings, rabbitSettings } from './common';
import { parseEnv, setting, type Env } from './env';

/** The distributor's settings, read from the environment once at cold start (names as in serverless.yml). */
export const distributorConfigSchema = z.object({
  ...dynamoSettings,
  ...rabbitSettings,
  DISTRIBUTOR_TABLE: setting.text(),
});

export type DistributorConfig = z.infer<typeof distributorConfigSchema>;

export const loadDistributorConfig = (env: Env): DistributorConfig => parseEnv(distributorConfigSchema, env);
