import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { distributorSettingsSchema, weightValue } from '../../lib/distributor/config';
import type { TenantControl } from '../../lib/distributor/planning/weights';
import { type ControlChange, DynamoTenantControlStore } from '../../lib/distributor/stores/tenant-control-store';
import { type Env, parseEnv } from '../../lib/platform/config';
import { InvalidEventError } from '../../lib/platform/errors';
import { isDotSegment } from '../../lib/rabbitmq/management';
import {
  DIRECT_ROUTING_WINDOWS,
  directRoutingSettings,
  dynamoSettings,
  passRequestSettings,
  passRequestSettingsOf,
} from '../../lib/settings/common';
import {
  checkDiscriminator,
  DISCRIMINATOR_SEPARATOR,
  MAX_QUEUE_NAME_BYTES,
  parseStagingQueueName,
  STAGING_SEPARATOR,
} from '../../lib/staging/staging-names';
import type { DirectRoutingSettings } from '../../lib/work-board/grants';
import { revocationWaitMs } from '../../lib/work-board/grants';
import { lambdaPassTrigger } from '../../lib/work-board/pass-trigger';
import { workRequester } from '../../lib/work-board/requester';
import { liveGrant, revokedDueAt } from '../../lib/work-board/work-board';
import { DynamoWorkBoard } from '../../lib/work-board/work-board-store';

/**
 * What the tenant controls need: the distributor's table, where the distributor reads them, the
 * direct-routing windows the functions have (a pause revokes the live grants and waits them out),
 * and how the routers ask for passes (a resume asks for its tenant's targets).
 */
const controlSettingsSchema = z.object({
  ...dynamoSettings,
  DISTRIBUTOR_TABLE: distributorSettingsSchema.shape.DISTRIBUTOR_TABLE,
  ...directRoutingSettings,
  ...passRequestSettings,
});
type ControlSettings = z.infer<typeof controlSettingsSchema>;
export const loadControlSettings = (env: Env) => parseEnv(controlSettingsSchema, env);

export interface ControlRow extends TenantControl {
  /** `tenant` or `tenant/workflow`. */
  key: string;
}

/**
 * A control key as an operator types it: `tenant` or `tenant/workflow`, each part a name a staging
 * queue `target»/tenant/workflow` can hold (the router's own discriminator check), not blank (a
 * shell quoting slip), not `.` or `..` (path segments, not names), and short enough that the
 * staging queue of even a one-character target fits RabbitMQ's 255 bytes (the router drops what
 * does not fit, so a longer key would match nothing). Returns a reason when it is not one.
 */
export function controlKeyProblem(key: string): string | undefined {
  const parts = key.split(DISCRIMINATOR_SEPARATOR);
  if (parts.length > 2) return 'must be <tenant> or <tenant>/<workflow>';
  for (const [field, value] of parts.map((part, i) => [i === 0 ? 'tenant' : 'workflow', part] as const)) {
    if (value.length > 0 && value.trim() === '') return `${field}: must not be blank`;
    if (isDotSegment(value)) return `${field}: must not be "." or ".." (path segments, not names)`;
    try {
      checkDiscriminator(field, value);
    } catch (error) {
      if (error instanceof InvalidEventError) return error.message;
      throw error;
    }
  }
  const shortestQueue = `t${STAGING_SEPARATOR}${DISCRIMINATOR_SEPARATOR}${key}`;
  const bytes = Buffer.byteLength(shortestQueue, 'utf8');
  if (bytes > MAX_QUEUE_NAME_BYTES) {
    return `is too long: no staging queue can hold it (${bytes} bytes with the shortest target; RabbitMQ allows ${MAX_QUEUE_NAME_BYTES})`;
  }
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

/**
 * Revokes every live grant on the work board, as an execution does (DynamoWorkBoard.revoke): routers
 * stage from then on, and each target is due once no router can still be publishing on a grant it
 * read, when its pass sees the new control and grants nothing (a pause stands: grants.ts `mayGrant`, `grantsWithheld`).
 * The board's version is raised first (a request for no target): a grant an execution decided on
 * controls read before the change is written only while the version is the one it read before them,
 * so it is refused, or already on the board this reads. Answers how many grants it revoked.
 */
export async function revokeGrants(
  doc: DynamoDBDocumentClient,
  table: string,
  windows: Pick<DirectRoutingSettings, 'readMs' | 'publishMs'> = DIRECT_ROUTING_WINDOWS,
): Promise<number> {
  const board = new DynamoWorkBoard(doc, table);
  const seen = await board.request([]);
  const at = Date.now();
  const granted = [...seen.targets.keys()].filter((target) => liveGrant(seen, target, at) !== undefined);
  if (granted.length > 0) {
    await board.revoke(granted, revokedDueAt(seen, granted, at, revocationWaitMs(windows)));
  }
  return granted.length;
}

/** The targets where `key` (`tenant` or `tenant/workflow`) has a staging queue among `stagingQueues`, in name order. Pure. */
export function targetsOf(key: string, stagingQueues: readonly string[]): string[] {
  const [tenant, workflow] = key.split(DISCRIMINATOR_SEPARATOR);
  const targets = new Set<string>();
  for (const parts of stagingQueues.map(parseStagingQueueName)) {
    if (parts === undefined || parts.tenant !== tenant) continue;
    if (workflow === undefined || parts.workflow === workflow) targets.add(parts.target);
  }
  return [...targets].sort();
}

/**
 * Asks for passes over `targets` as a router batch does (docs/distributor.md "Run model"): a
 * request on the work board, and an execution started when none runs and the deployment names the
 * distributor function; without one, the next scheduled execution reads the request.
 */
export async function requestPasses(
  doc: DynamoDBDocumentClient,
  settings: ControlSettings,
  targets: readonly string[],
): Promise<void> {
  const passes = passRequestSettingsOf(settings);
  const board = new DynamoWorkBoard(doc, settings.DISTRIBUTOR_TABLE);
  const trigger = lambdaPassTrigger(passes);
  try {
    if (trigger) await workRequester({ board, trigger, graceMs: passes.graceMs })(targets);
    else await board.request(targets);
  } finally {
    trigger?.destroy();
  }
}
