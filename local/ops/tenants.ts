import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { type Env, parseEnv } from '../../lib/platform/config';
import { routerConfigSchema } from '../../lib/routing/config';
import { DynamoTenantCounterStore } from '../../lib/routing/priority/counter-store';
import { isExpired, levelOf, type TenantPriorityRules } from '../../lib/routing/priority/rules';
import { dynamoSettings } from '../../lib/settings/common';

/** What an operator needs to read tenants: the router's table and priority rules (same variables as the router). */
const tenantSettingsSchema = z.object({
  ...dynamoSettings,
  TENANT_TABLE: routerConfigSchema.shape.TENANT_TABLE,
  TENANT_PRIORITY_RESET_SECONDS: routerConfigSchema.shape.TENANT_PRIORITY_RESET_SECONDS,
  TENANT_PRIORITY_THRESHOLDS: routerConfigSchema.shape.TENANT_PRIORITY_THRESHOLDS,
  TENANT_PRIORITY_QUIET_LEVEL: routerConfigSchema.shape.TENANT_PRIORITY_QUIET_LEVEL,
});

export function loadTenantSettings(env: Env) {
  const s = parseEnv(tenantSettingsSchema, env);
  const rules: TenantPriorityRules = {
    resetIntervalMs: s.TENANT_PRIORITY_RESET_SECONDS * 1000,
    thresholds: s.TENANT_PRIORITY_THRESHOLDS,
    quietLevel: s.TENANT_PRIORITY_QUIET_LEVEL,
  };
  return { table: s.TENANT_TABLE, rules, dynamo: s };
}

export interface TenantRow {
  tenant: string;
  /** The pending count after the tenant's last check. */
  count: number;
  /** The level its last check gave its documents. */
  level: number;
  lastUpdate: string;
  /** True when the reset interval has passed: its next document starts again at count 0, level 1. */
  resetDue: boolean;
}

/** Every tenant counter: an operator's view, not a hot path. Busiest (lowest count) first. */
export async function listTenants(
  doc: DynamoDBDocumentClient,
  table: string,
  rules: TenantPriorityRules,
  nowMs = Date.now(),
): Promise<TenantRow[]> {
  const counters = await new DynamoTenantCounterStore(doc, table, rules).list();
  return counters
    .map((counter) => ({
      tenant: counter.tenantId,
      count: counter.count,
      level: levelOf(counter.count, rules),
      lastUpdate: new Date(counter.lastUpdateMs).toISOString(),
      resetDue: isExpired(counter, nowMs, rules),
    }))
    .sort((a, b) => a.count - b.count || a.tenant.localeCompare(b.tenant));
}

/**
 * Forgets a tenant's counter, so its next document starts at count 0 (level 1), as after the
 * reset interval. Returns false if the tenant had no counter.
 */
export function resetTenant(
  doc: DynamoDBDocumentClient,
  table: string,
  rules: TenantPriorityRules,
  tenant: string,
): Promise<boolean> {
  return new DynamoTenantCounterStore(doc, table, rules).forget(tenant);
}
