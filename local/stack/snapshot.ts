import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cleanupJobNames } from '../../lib/cleanup/jobs';
import type { CleanupOperator } from '../../lib/cleanup/operator';
import type { PassSummary } from '../../lib/distributor/report';
import type { TenantPriorityRules } from '../../lib/priority/rules';
import { DynamoStagingRegistry } from '../../lib/queues/dynamo-staging-registry';
import type { ManagementClient } from '../../lib/rabbitmq/management';
import { type StagingCounts, stagingCounts } from '../cli/staging-counts';
import { describeQueues, type QueueSettings } from '../ops/queues';
import { listTenants } from '../ops/tenants';
import type { DemoRegistry, RegistryFigures } from './demo-registry';
import type { ScheduleStats } from './scheduler';
import type { TenantTraffic } from './traffic';
import { measuredWait } from './trends';

export interface TenantLine {
  tenant: string;
  level?: number;
  count?: number;
  sent: number;
  routed: number;
  deadLettered: number;
  staged: number;
  /** Moved to the target per second, over the recent passes. */
  movedPerSecond: number;
  /**
   * Seconds its messages waited in staging, the latency Fairway adds, as the distributor measured
   * it when it moved them (measuredWait); undefined when no recent pass measured one.
   */
  waitSeconds?: number;
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
  simulatedMinutes: number;
  speed: number;
  tenants: TenantLine[];
  distributor?: ScheduleStats;
  /** Distributor passes started on demand (router or follow-up) among the recent passes. */
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
  /** The distributor's recent passes (scheduled and on demand) with the time each ended, oldest first. */
  recentPasses: readonly RecentPass[];
}

export interface RecentPass {
  at: number;
  summary: PassSummary;
  /** The pass was not a scheduled execution's first (requests and due times asked for it). */
  onDemand: boolean;
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
  const movedRecently = new Map<string, number>();
  for (const queue of s.recentPasses.flatMap((pass) => pass.summary.targets.flatMap((t) => t.queues))) {
    movedRecently.set(queue.name, (movedRecently.get(queue.name) ?? 0) + queue.moved);
  }
  // Over the window the recent passes span (at least a second, so one pass does not read as a burst).
  const windowSeconds = Math.max(1, (Date.now() - (s.recentPasses[0]?.at ?? Date.now())) / 1000);
  const perSecond = (moved: number) => Math.round((moved / windowSeconds) * 10) / 10;
  const tenantNames = [...new Set([...s.traffic.keys(), ...tenants.map((t) => t.tenant)])];
  const elapsedMs = Date.now() - s.startedAt;
  return {
    elapsedSeconds: Math.round(elapsedMs / 1000),
    simulatedMinutes: Math.round((elapsedMs * s.speed) / 60_000),
    speed: s.speed,
    tenants: tenantNames.map((tenant): TenantLine => {
      const counter = tenants.find((t) => t.tenant === tenant);
      const queues = staging.filter((q) => q.tenant === tenant);
      const traffic = s.traffic.get(tenant);
      const staged = queues.reduce((n, q) => n + q.depth, 0);
      const movedPerSecond = perSecond(queues.reduce((n, q) => n + (movedRecently.get(q.queue) ?? 0), 0));
      const waitSeconds = measuredWait(s.recentPasses, new Set(queues.map((q) => q.queue)));
      return {
        tenant,
        ...(counter ? { level: counter.level, count: counter.count } : {}),
        sent: traffic?.sent ?? 0,
        routed: traffic?.routed ?? 0,
        deadLettered: traffic?.deadLettered ?? 0,
        staged,
        movedPerSecond,
        ...(waitSeconds === undefined ? {} : { waitSeconds }),
        processed: s.processed.get(tenant) ?? 0,
      };
    }),
    ...(distributor ? { distributor: { ...distributor, lastResult: undefined } } : {}),
    passesOnDemand: s.recentPasses.filter((pass) => pass.onDemand).length,
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
