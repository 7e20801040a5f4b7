import { DeleteCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { dynamoSettings } from '../../lib/config/common';
import { type Env, parseEnv } from '../../lib/config/env';
import { routerConfigSchema } from '../../lib/config/router';
import { isExpired, levelOf, type TenantPriorityRules } from '../../lib/priority/core';

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

/** Every tenant counter (one Scan, paged): an operator's view, not a hot path. Busiest (lowest count) first. */
export async function listTenants(
  doc: DynamoDBDocumentClient,
  table: string,
  rules: TenantPriorityRules,
  nowMs = Date.now(),
) {
  const rows: TenantRow[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey }));
    for (const item of page.Items ?? []) {
      const count = Number(item.pendingCount);
      const lastUpdateMs = Number(item.lastUpdateMs);
      rows.push({
        tenant: String(item.pk),
        count,
        level: levelOf(count, rules),
        lastUpdate: new Date(lastUpdateMs).toISOString(),
        resetDue: isExpired({ count, lastUpdateMs }, nowMs, rules),
      });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows.sort((a, b) => a.count - b.count || a.tenant.localeCompare(b.tenant));
}

/**
 * Forgets a tenant's counter, so its next document starts at count 0 (level 1), as after the
 * reset interval. Returns false if the tenant had no counter.
 */
export async function resetTenant(doc: DynamoDBDocumentClient, table: string, tenant: string): Promise<boolean> {
  const { Attributes } = await doc.send(
    new DeleteCommand({ TableName: table, Key: { pk: tenant }, ReturnValues: 'ALL_OLD' }),
  );
  return Attributes !== undefined;
}
