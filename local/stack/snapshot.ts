import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cleanupJobNames } from '../../lib/cleanup/jobs';
import type { CleanupOperator } from '../../lib/cleanup/operator';
import type { ManagementClient } from '../../lib/rabbitmq/management';
import type { TenantPriorityRules } from '../../lib/routing/priority/rules';
import { parseStagingQueueName } from '../../lib/staging/staging-names';
import { DynamoStagingRegistry } from '../../lib/staging/staging-registry';
import { type StagingCounts, stagingCounts } from '../cli/staging-counts';
import { describeQueues, type QueueSettings } from '../ops/queues';
import { readStagingWaits, type WaitRow } from '../ops/tenant-waits';
import { listTenants } from '../ops/tenants';
import type { DemoRegistry, RegistryFigures } from './demo-registry';
import { perSecond, type RateWindow } from './passes';
import type { ScheduleStats } from './scheduler';
import type { TenantTraffic } from './traffic';

export interface TenantLine {
  tenant: string;
  level?: number;
  count?: number;
  sent: number;
  routed: number;
  deadLettered: number;
  /** In its staging queues, by AMQP (exact when read): read after `processed` and before `sent`, so never more than sent − processed. */
  staged: number;
  /** Moved to the target per second in the snapshot's rate window (each pass's moves spread over its span). */
  movedPerSecond: number;
  /** Processed per second by the workers over the same window, as they counted them. */
  processedPerSecond: number;
  /**
   * Seconds its messages waited in staging, the latency Fairway adds: the longest wait of the
   * distributor's last measurement of its queues, as `fairway tenants` reads it (local/ops/tenant-waits.ts).
   * Undefined when none is kept: nothing moved yet, or only messages without the router's stamp.
   */
  waitSeconds?: number;
  /** How long ago that wait was measured, in seconds. */
  waitAgeSeconds?: number;
  processed: number;
}

export interface JobLine {
  job: string;
  stackSize: number;
  deadLetters: number;
  steps: number;
  /** Steps that found the stack empty and filled it: from the second one on, the stack has drained. */
  fills: number;
  errors: number;
  deleted: number;
  lastError?: string;
}

export interface Snapshot {
  elapsedSeconds: number;
  /** When it was taken (ISO 8601). */
  takenAt: string;
  /** The span, in seconds, the tenants' rates are over (the view's window, shorter just after start-up). */
  rateWindowSeconds: number;
  /**
   * When that span ends (ISO 8601): when it was taken, or, while a distributor execution runs, the
   * end of its last logged pass (a pass's moves are known when it ends).
   */
  rateWindowEnd: string;
  simulatedMinutes: number;
  speed: number;
  tenants: TenantLine[];
  distributor?: ScheduleStats;
  /** Distributor passes on demand (router or follow-up) so far, counted as their executions end. */
  passesOnDemand: number;
  jobs: JobLine[];
  registry: RegistryFigures;
  /** Staging queues that exist, and how many the distributor reaped. */
  staging: StagingCounts;
}

export interface SnapshotSources {
  speed: number;
  startedAt: number;
  doc: DynamoDBDocumentClient;
  rules: TenantPriorityRules;
  management: ManagementClient;
  queueSettings: QueueSettings;
  operator: CleanupOperator;
  registry: DemoRegistry;
  traffic: ReadonlyMap<string, TenantTraffic>;
  processed: ReadonlyMap<string, number>;
  schedules: ReadonlyMap<string, ScheduleStats>;
  fills: ReadonlyMap<string, number>;
  /** The distributor's passes over the spans they ran, and the workers' counts over the same window. */
  rates: RateWindow;
  /** Passes on demand of the executions ended so far. */
  onDemand: { readonly passes: number };
  /** The messages each queue holds now, by AMQP (a queue that is gone holds none). */
  depths(queues: readonly string[]): Promise<ReadonlyMap<string, number>>;
}

/** Which function runs which job (serverless.yml function names). */
const functionOfJob: Record<string, string> = {
  'registry-timebased-cleanup': 'registryTimebasedCleanup',
  'registry-status90-cleanup': 'registryStatus90Cleanup',
  'repository-cleanup': 'repositoryCleanup',
};

/** Reads the whole local stack's state: counters, queues, stacks and registry, as the operator CLI would. */
export async function takeSnapshot(s: SnapshotSources): Promise<Snapshot> {
  const [tenants, listing, stacks, registry] = await Promise.all([
    listTenants(s.doc, 'TenantCountersTable', s.rules),
    s.management.listQueues(),
    Promise.all(
      cleanupJobNames.map(async (job) => ({
        job,
        stack: await s.operator.stack(job, 0),
        dead: await s.operator.deadLetters(job),
      })),
    ),
    s.registry.figures(),
  ]);
  const stagingCounted = await stagingCounts(listing, new DynamoStagingRegistry(s.doc, 'StagingQueuesTable'));
  const { staging } = await describeQueues(listing, s.queueSettings);
  const distributor = s.schedules.get('distributor');
  const now = Date.now();
  const window = s.rates.span(now);
  // Processed first, staged next, sent last: a message is never counted both staged and processed.
  const processed = new Map(s.processed);
  const [depths, { waits }] = await Promise.all([
    s.depths(staging.map((q) => q.queue)),
    readStagingWaits(s.doc, 'DistributorStateTable'),
  ]);
  const tenantNames = [...new Set([...s.traffic.keys(), ...tenants.map((t) => t.tenant)])];
  const elapsedMs = now - s.startedAt;
  return {
    elapsedSeconds: Math.round(elapsedMs / 1000),
    takenAt: new Date(now).toISOString(),
    rateWindowSeconds: Math.round(window.seconds * 10) / 10,
    rateWindowEnd: new Date(window.to).toISOString(),
    simulatedMinutes: Math.round((elapsedMs * s.speed) / 60_000),
    speed: s.speed,
    tenants: tenantNames.map((tenant): TenantLine => {
      const counter = tenants.find((t) => t.tenant === tenant);
      const queues = staging.filter((q) => q.tenant === tenant).map((q) => q.queue);
      const traffic = s.traffic.get(tenant);
      const done = processed.get(tenant) ?? 0;
      const wait = lastWait(waits, tenant, now);
      return {
        tenant,
        ...(counter ? { level: counter.level, count: counter.count } : {}),
        sent: traffic?.sent ?? 0,
        routed: traffic?.routed ?? 0,
        deadLettered: traffic?.deadLettered ?? 0,
        staged: queues.reduce((n, q) => n + (depths.get(q) ?? 0), 0),
        movedPerSecond: perSecond(
          s.rates.moved((queue) => parseStagingQueueName(queue)?.tenant === tenant, window),
          window.seconds,
        ),
        processedPerSecond: perSecond(s.rates.processedIn(tenant, window), window.seconds),
        ...wait,
        processed: done,
      };
    }),
    ...(distributor ? { distributor: { ...distributor, lastResult: undefined } } : {}),
    passesOnDemand: s.onDemand.passes,
    jobs: stacks.map(({ job, stack, dead }) => {
      const schedule = s.schedules.get(functionOfJob[job] ?? job);
      return {
        job,
        stackSize: stack.size,
        deadLetters: dead.length,
        steps: schedule?.invocations ?? 0,
        fills: s.fills.get(job) ?? 0,
        errors: schedule?.errors ?? 0,
        deleted: registry.deletedBy[job] ?? 0,
        ...(schedule?.lastError ? { lastError: schedule.lastError } : {}),
      };
    }),
    registry,
    staging: stagingCounted,
  };
}

/**
 * A tenant's last measured wait: of its queues' kept waits (`fairway tenants`'s rows), the one
 * measured last (the longest of those measured together), with its age. Pure.
 */
export function lastWait(
  rows: readonly WaitRow[],
  tenant: string,
  now: number,
): { waitSeconds?: number; waitAgeSeconds?: number } {
  let last: { at: number; seconds: number } | undefined;
  for (const row of rows) {
    if (row.tenant !== tenant) continue;
    const at = Date.parse(row.measuredAt);
    if (!last || at > last.at || (at === last.at && row.waitSeconds > last.seconds))
      last = { at, seconds: row.waitSeconds };
  }
  if (!last) return {};
  return { waitSeconds: last.seconds, waitAgeSeconds: Math.max(0, Math.round((now - last.at) / 1000)) };
}
