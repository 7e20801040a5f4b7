import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { dynamoSettings } from '../../lib/config/common';
import { distributorSettingsSchema, weightValue } from '../../lib/config/distributor';
import { type Env, parseEnv } from '../../lib/config/env';
import { type ControlChange, DynamoTenantControlStore } from '../../lib/distributor/tenant-control-store';
import type { TenantControl } from '../../lib/distributor/tenant-controls';
import { DISCRIMINATOR_SEPARATOR, STAGING_SEPARATOR } from '../../lib/queues/staging-names';

/** What the tenant controls need: the distributor's table, where the distributor reads them. */
const controlSettingsSchema = z.object({
  ...dynamoSettings,
  DISTRIBUTOR_TABLE: distributorSettingsSchema.shape.DISTRIBUTOR_TABLE,
});
export const loadControlSettings = (env: Env) => parseEnv(controlSettingsSchema, env);

export interface ControlRow extends TenantControl {
  /** `tenant` or `tenant/workflow`. */
  key: string;
}

/**
 * A control key as an operator types it: `tenant` or `tenant/workflow`, neither part empty nor
 * holding `»`. Returns a reason when it is not one.
 */
export function controlKeyProblem(key: string): string | undefined {
  const parts = key.split(DISCRIMINATOR_SEPARATOR);
  if (parts.length > 2) return 'must be <tenant> or <tenant>/<workflow>';
  if (parts.some((part) => part.length === 0)) return 'must not have an empty tenant or workflow';
  if (key.includes(STAGING_SEPARATOR)) return `must not contain "${STAGING_SEPARATOR}"`;
  return undefined;
}

/** A weight as typed on the command line: a number 0–1000 with at most three decimals (`.5` too). */
export function parseWeight(text: string): number | undefined {
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text)) return undefined;
  const parsed = weightValue.safeParse(Number(text));
  return parsed.success ? parsed.data : undefined;
}

export async function listControls(doc: DynamoDBDocumentClient, table: string): Promise<ControlRow[]> {
  const controls = await new DynamoTenantControlStore(doc, table).read();
  return Object.entries(controls)
    .map(([key, control]) => ({ key, ...control }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

export function changeControl(
  doc: DynamoDBDocumentClient,
  table: string,
  key: string,
  change: ControlChange,
): Promise<TenantControl> {
  return new DynamoTenantControlStore(doc, table).update(key, change);
}
