import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { ReapIdleStagingQueues } from '../distributor/backstop';
import { amqpQueueDeleter, backstopReaper } from '../distributor/backstop';
import {
  type DistributorConfig,
  type DistributorSettings,
  loadDistributorConfig,
  quietFirstSettingsOf,
  type RunModelSettings,
} from '../distributor/config';
import { invocationRunner, type RunInvocation } from '../distributor/execution';
import type { TuningDeps } from '../distributor/kept-length';
import type { OpenChannel } from '../distributor/moving/channels';
import { createDistributor, type Distributor } from '../distributor/pass';
import { fairByOf } from '../distributor/planning/weights';
import type { DistributorReport, ExecutionSummary } from '../distributor/report';
import { stagingSource } from '../distributor/staging-source';
import { DynamoLeaseStore } from '../distributor/stores/lease-store';
import { DynamoRotationStore, DynamoTunedLengthStore } from '../distributor/stores/rotation-store';
import { DynamoTenantControlStore } from '../distributor/stores/tenant-control-store';
import { DynamoWaitStore } from '../distributor/stores/wait-store';
import { documentClient } from '../platform/aws';
import { amqpUser } from '../platform/config';
import { rabbitmqConnections } from '../platform/secrets';
import { AmqpSession } from '../rabbitmq/connection';
import { ManagementClient, type QueueInfo } from '../rabbitmq/management';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import { directRoutingOf, dynamoClientSettings, passRequestSettingsOf } from '../settings/common';
import { DynamoStagingRegistry, type StagingRegistry } from '../staging/staging-registry';
import {
  type DistributorEvent,
  lambdaPassTrigger,
  type PassTrigger,
  parseDistributorEvent,
} from '../work-board/pass-trigger';
import { DynamoWorkBoard } from '../work-board/work-board-store';
import { powertoolsDistributorReport, type Warn, warningReport } from './distributor-report';
import type { FunctionDefinition } from './lambda-function';

/**
 * The distributor's composition root, the one file of the part that touches Powertools: it builds
 * the adapters from the configuration once per container and hands the distributor a report.
 */

export { type Warn, warningReport };

/** What a distributor reads and moves through. */
export interface DistributorAdapters {
  /** A confirm channel on the container's AMQP connection. */
  openChannel: OpenChannel;
  /** The management API's listing of the vhost (the backstop's). */
  listQueues: () => Promise<QueueInfo[]>;
  /** The management API's GET of one queue (a target's shape). */
  getQueue: (name: string) => Promise<QueueInfo | undefined>;
  /** The staging-queue registry (lib/staging/staging-registry.ts); without it, passes over named targets list the vhost. */
  registry?: StagingRegistry;
  /** The backstop's reaper of idle staging queues (`stagingAdapters`, below); without it nothing is reaped. */
  reapIdleStagingQueues?: ReapIdleStagingQueues;
  /** The management API's policies and operator policies of the vhost. */
  listPolicies: () => Promise<QueuePolicies>;
  /** DynamoDB, for the leases, rotations, tenant controls and tuned lengths in DISTRIBUTOR_TABLE. */
  doc: DynamoDBDocumentClient;
  /** Messages per second a target's consumers took over a window (ManagementClient.consumptionRate). */
  consumptionRate: TuningDeps['rate'];
  /** Starts executions (a successor); without it executions run on the schedule alone. */
  trigger?: PassTrigger;
}

/** The configuration as the distributor's code reads it: the one place its environment names are translated. */
export function distributorSettings(config: DistributorConfig): DistributorSettings {
  return {
    planner: config.DISTRIBUTOR_PLANNER,
    fairBy: fairByOf(config.DISTRIBUTOR_FAIR_BY),
    defaultMaxLength: config.DISTRIBUTOR_DEFAULT_MAX_LENGTH,
    targets: config.DISTRIBUTOR_TARGETS,
    weights: config.DISTRIBUTOR_WEIGHTS,
    refillThresholdPercent: config.tuning.refillThresholdPercent,
    missingTarget: config.DISTRIBUTOR_MISSING_TARGET,
    newTargetArguments: config.DISTRIBUTOR_NEW_TARGET_ARGUMENTS,
    moveConcurrency: config.tuning.moveConcurrency,
    maxPrefetch: config.tuning.maxPrefetch,
    safetyMarginMs: config.tuning.safetyMarginMs,
    idleStopMs: config.tuning.idleStopMs,
    followUpDelayMs: config.tuning.followUpDelayMs,
    followUpMaxDelayMs: config.tuning.followUpMaxDelayMs,
    targetConcurrency: config.tuning.targetConcurrency,
    quietFirst: quietFirstSettingsOf(config),
    buffer: { horizonMs: config.DISTRIBUTOR_BUFFER_HORIZON_MS },
  };
}

/** How executions follow the work board, from the configuration. */
export function runModelSettings(config: DistributorConfig): RunModelSettings {
  return {
    maxExecutions: config.DISTRIBUTOR_MAX_EXECUTIONS,
    waitBoundMs: config.tuning.waitBoundMs,
    boardPollMs: config.tuning.boardPollMs,
    backstopIntervalMs: config.tuning.backstopIntervalMs,
    stagingCacheMs: config.tuning.stagingCacheMs,
    safetyMarginMs: config.tuning.safetyMarginMs,
  };
}

/** The distributor over given adapters: the container's (below), or a test's on its own vhost and table. */
export function buildDistributor(
  config: DistributorConfig,
  adapters: DistributorAdapters,
  report: DistributorReport,
): Distributor & { run: RunInvocation } {
  const runModel = runModelSettings(config);
  const direct = directRoutingOf(config);
  const board = new DynamoWorkBoard(adapters.doc, config.DISTRIBUTOR_TABLE);
  const distributor = createDistributor({
    settings: distributorSettings(config),
    listQueues: adapters.listQueues,
    listPolicies: adapters.listPolicies,
    openChannel: adapters.openChannel,
    leases: new DynamoLeaseStore(adapters.doc, config.DISTRIBUTOR_TABLE),
    rotations: new DynamoRotationStore(adapters.doc, config.DISTRIBUTOR_TABLE),
    publisherUser: amqpUser(config.AMQP_URL),
    controls: new DynamoTenantControlStore(adapters.doc, config.DISTRIBUTOR_TABLE, { skipped: report.controlSkipped }),
    tuning: {
      rate: adapters.consumptionRate,
      lengths: new DynamoTunedLengthStore(adapters.doc, config.DISTRIBUTOR_TABLE),
    },
    report,
    waits: new DynamoWaitStore(adapters.doc, config.DISTRIBUTOR_TABLE),
    ...(direct.mode === 'granted'
      ? { grantOf: (target: string) => board.grants([target]).then((grants) => grants.get(target)) }
      : {}),
    ...(adapters.registry
      ? {
          staging: stagingSource({
            registry: adapters.registry,
            getQueue: adapters.getQueue,
            cacheMs: runModel.stagingCacheMs,
            queueBytes: config.DISTRIBUTOR_PLANNER === 'tenant' && config.DISTRIBUTOR_FAIR_BY === 'bytes',
          }),
        }
      : {}),
  });
  const run = invocationRunner({
    board,
    distributor,
    settings: runModel,
    direct,
    graceMs: config.tuning.requestGraceMs,
    report,
    listQueues: adapters.listQueues,
    ...(adapters.trigger ? { trigger: adapters.trigger } : {}),
    ...(adapters.registry ? { registry: adapters.registry } : {}),
    ...(adapters.reapIdleStagingQueues ? { reapIdleStagingQueues: adapters.reapIdleStagingQueues } : {}),
  });
  return { ...distributor, run };
}

export interface DistributorServiceOptions {
  /** The management API's fetch (a bench counts its requests). */
  fetch?: typeof fetch;
  /** A staging-queue registry of a bench's or test's, read instead of STAGING_TABLE's (nothing is then reaped). */
  registry?: StagingRegistry;
}

/**
 * The distributor of one Lambda container, built once from its configuration: one AMQP connection
 * (reopened after a broker restart), one management client, one DynamoDB client.
 */
export function createDistributorService(
  config: DistributorConfig,
  report: DistributorReport,
  options: DistributorServiceOptions = {},
) {
  const amqp = new AmqpSession(config.AMQP_URL);
  const management = new ManagementClient(config.RABBITMQ_MANAGEMENT_URL, config.RABBITMQ_VHOST, options.fetch);
  const doc = documentClient(dynamoClientSettings(config));
  const passSettings = passRequestSettingsOf(config, config.tuning.requestGraceMs);
  const trigger = lambdaPassTrigger(passSettings);
  const distributor = buildDistributor(
    config,
    {
      openChannel: () => amqp.openConfirmChannel(),
      listQueues: () => management.listQueues(),
      getQueue: (name) => management.getQueue(name),
      listPolicies: () => management.listPolicies(),
      ...stagingAdapters(config, doc, amqp, report, options.registry),
      doc,
      consumptionRate: (target, windowSeconds) => management.consumptionRate(target, windowSeconds),
      trigger,
    },
    report,
  );
  return {
    run: distributor.run,
    runPass: distributor.runPass,
    async close() {
      await amqp.close();
      doc.destroy();
      trigger?.destroy();
    },
  };
}

/**
 * One invocation (docs/distributor.md "Run model"): a scheduled one runs the backstop, then each
 * runs as an execution. The handler's core; the latency bench runs it without the logging middlewares.
 */
export function distributorInvocation(service: Pick<ReturnType<typeof createDistributorService>, 'run'>) {
  return async (event: ScheduledEvent | DistributorEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) =>
    service.run(parseDistributorEvent(event), context.getRemainingTimeInMillis());
}

/** The distributor as a Lambda function (functions/distributor.ts): the schedule's backstop and executions. */
export const distributorFunction: FunctionDefinition<
  DistributorConfig,
  ScheduledEvent | DistributorEvent,
  ExecutionSummary
> = {
  name: 'distributor',
  connections: rabbitmqConnections,
  load: loadDistributorConfig,
  build(config, observability) {
    const report = powertoolsDistributorReport(observability, { alarmSeconds: config.tuning.waitAlarmSeconds });
    const service = createDistributorService(config, report);
    return { handle: distributorInvocation(service), close: service.close };
  },
};

/** The reaper's hold on a target: a reap of at most 100 queues, each a mark, a delete and a record delete. */
const REAPER_LEASE_MS = 60_000;

/**
 * The staging-queue registry the passes read (STAGING_TABLE) and the backstop's reaper over it; a
 * registry given instead (a bench's) is read alone and nothing is reaped. No STAGING_TABLE: passes
 * over named targets list the vhost, as before the registry.
 */
export function stagingAdapters(
  config: DistributorConfig,
  doc: DynamoDBDocumentClient,
  amqp: Pick<AmqpSession, 'sharedChannel'>,
  report: DistributorReport,
  given?: StagingRegistry,
): { registry?: StagingRegistry; reapIdleStagingQueues?: ReapIdleStagingQueues } {
  if (given) return { registry: given };
  if (!config.STAGING_TABLE) return {};
  const registry = new DynamoStagingRegistry(doc, config.STAGING_TABLE);
  return {
    registry,
    reapIdleStagingQueues: backstopReaper({
      registry,
      queues: amqpQueueDeleter(amqp),
      leases: new DynamoLeaseStore(doc, config.DISTRIBUTOR_TABLE),
      reapAfterMs: config.tuning.reapAfterMs,
      leaseMs: REAPER_LEASE_MS,
      report,
    }),
  };
}
