import { z } from 'zod';
import { type Env, parseEnv } from '../../lib/platform/config';
import { ManagementClient } from '../../lib/rabbitmq/management';
import { DynamoTenantCounterStore } from '../../lib/routing/priority/counter-store';
import { defaultRules } from '../../lib/routing/priority/rules';
import { rabbitSettings } from '../../lib/settings/common';
import { DISCRIMINATOR_SEPARATOR, parseStagingQueueName } from '../../lib/staging/staging-names';
import { cliDocumentClient } from './dynamo';
import { loadTenantSettings } from './tenants';

/** What Fairway has seen of its tenants: the router's counters and the staging queues on the broker. */
export interface SeenTenants {
  /** Tenants with a counter (TENANT_TABLE); undefined when the table is not configured. */
  counters?: readonly string[];
  /** Staging queue names (the management API); undefined when it is not configured. */
  stagingQueues?: readonly string[];
}

/**
 * Whether a control key names something Fairway has seen: a tenant with a counter or a staging
 * queue; a `tenant/workflow` with a staging queue of that workflow (counters know no workflows).
 */
export function isSeen(key: string, seen: SeenTenants): boolean {
  const [tenant, workflow] = key.split(DISCRIMINATOR_SEPARATOR);
  const queues = (seen.stagingQueues ?? []).map(parseStagingQueueName);
  if (workflow !== undefined) return queues.some((q) => q?.tenant === tenant && q?.workflow === workflow);
  return (seen.counters ?? []).includes(tenant!) || queues.some((q) => q?.tenant === tenant);
}

const managementSettingsSchema = z.object({
  RABBITMQ_MANAGEMENT_URL: rabbitSettings.RABBITMQ_MANAGEMENT_URL,
  RABBITMQ_VHOST: rabbitSettings.RABBITMQ_VHOST,
});

/**
 * Reads what the environment lets the CLI see: the counters when TENANT_TABLE is set, the staging
 * queues when RABBITMQ_MANAGEMENT_URL is. Neither set: undefined (nothing to tell a tenant by).
 */
export async function readSeenTenants(env: Env): Promise<SeenTenants | undefined> {
  const [counters, stagingQueues] = await Promise.all([
    env.TENANT_TABLE ? readCounters(env) : undefined,
    env.RABBITMQ_MANAGEMENT_URL ? readStagingQueues(env) : undefined,
  ]);
  if (counters === undefined && stagingQueues === undefined) return undefined;
  return { ...(counters ? { counters } : {}), ...(stagingQueues ? { stagingQueues } : {}) };
}

async function readCounters(env: Env): Promise<string[]> {
  const settings = loadTenantSettings(env);
  const doc = cliDocumentClient(settings.dynamo, env);
  try {
    // Only the tenant ids are read; the priority rules do not matter for that.
    return (await new DynamoTenantCounterStore(doc, settings.table, defaultRules).list()).map((c) => c.tenantId);
  } finally {
    doc.destroy();
  }
}

/** The staging queues the broker lists (the management API of RABBITMQ_MANAGEMENT_URL). */
export async function readStagingQueues(env: Env): Promise<string[]> {
  const settings = parseEnv(managementSettingsSchema, env);
  const queues = await new ManagementClient(settings.RABBITMQ_MANAGEMENT_URL, settings.RABBITMQ_VHOST).listQueues();
  return queues.map((q) => q.name).filter((name) => parseStagingQueueName(name) !== undefined);
}
