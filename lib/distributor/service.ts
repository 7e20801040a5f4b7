import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { documentClient } from '../aws/dynamo';
import { dynamoClientSettings, passRequestSettingsOf } from '../config/common';
import type { DistributorConfig } from '../config/distributor';
import { loadDistributorConfig } from '../config/distributor';
import { errorText } from '../errors';
import { lambdaPassTrigger, passRequests } from '../pass-requests/adapters';
import { DynamoLeaseStore } from '../pass-requests/lease-store';
import {
  MAX_PASS_DELAY_MS,
  type PassRequestEvent,
  type PassTrigger,
  parsePassRequestEvent,
} from '../pass-requests/pass-trigger';
import { amqpUser } from '../rabbitmq/amqp-url';
import { AmqpSession } from '../rabbitmq/connection';
import { ManagementClient, type QueueInfo } from '../rabbitmq/management';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import type { Observability } from '../runtime/observability';
import { rabbitmqConnections } from '../secrets/connections';
import type { FunctionDefinition } from '../secrets/lambda-function';
import type { OpenChannel } from './moving/channel-pair';
import { createDistributor, type Distributor } from './pass';
import type { DistributorReport, PassSummary } from './report';
import type { DistributorSettings } from './settings';
import { DynamoRotationStore } from './stores/rotation-store';
import { DynamoTenantControlStore } from './stores/tenant-control-store';
import { DynamoTunedLengthStore } from './stores/tuned-length-store';
import { DynamoWaitStore } from './stores/wait-store';
import type { TuningDeps } from './target-pass';
import { waitReport } from './waits';

/**
 * The distributor's composition root, the one file of the part that touches Powertools: it builds
 * the adapters from the configuration once per container and hands the distributor a report.
 */

export type Warn = (message: string, details: Record<string, unknown>) => void;

/** A report that words every event as one warning; a pass's end goes to `passed`, tuning to `info`. */
export function warningReport(
  warn: Warn,
  passed: (summary: PassSummary) => void = () => undefined,
  info: Warn = () => undefined,
): DistributorReport {
  return {
    lengthTuned: (tuned) =>
      info(
        tuned.mode === 'apply'
          ? 'Target length tuned to the processing-time goal'
          : 'Target length tuning in noop mode: would set this length, changed nothing',
        { ...tuned },
      ),
    targetFailed: (target, error) =>
      warn('Distribution to a target failed; the next pass retries it', { target, error: errorText(error) }),
    targetMissing: (target, staging) =>
      warn('Staging queues have no target queue; skipped (DISTRIBUTOR_MISSING_TARGET=skip)', { target, staging }),
    movesCutShort: (target, queues) =>
      warn('Moves ended early: the channel or connection closed; nothing is lost, the next pass moves the rest', {
        target,
        queues,
      }),
    rotationConflict: (target) => warn("Rotation state changed under this pass; kept the other writer's", { target }),
    waitsNotRecorded: (target, error) =>
      warn('Could not keep the staging waits for the CLI; the next pass writes them', {
        target,
        error: errorText(error),
      }),
    leaseNotReleased: (target, error) =>
      warn('Could not release the lease; it expires by itself', { target, error: errorText(error) }),
    followUpFailed: (target, error) =>
      warn("Could not ask for the target's next pass; the schedule's next pass covers it", {
        target,
        error: errorText(error),
      }),
    controlsUnreadable: (error) =>
      warn('Could not read the tenant controls; distributed with the last ones read', { error: errorText(error) }),
    controlSkipped: (key, problem) =>
      warn('A tenant control entry is malformed and was skipped; the others apply', { key, problem }),
    requestDelayClamped: (requestedMs, maxMs) =>
      warn('A pass request asked to wait longer than the maximum; waited the maximum', { requestedMs, maxMs }),
    noTimeToMove: (remainingMs, safetyMarginMs) =>
      warn('No time left for moves within the safety margin; only planning this pass', {
        remainingMs,
        safetyMarginMs,
      }),
    passed,
  };
}

/**
 * Warnings to the function's logger; each pass as one structured log line (every target and
 * staging queue) and EMF metrics: pass totals without dimensions, per-target figures with a
 * `target` dimension (targets are few; tenants are never a dimension). Per-tenant waits go to
 * their own log lines, which a Contributor Insights rule ranks (infra/cloudwatch.yml).
 */
export function powertoolsDistributorReport(
  { logger, metrics }: Observability,
  waits: { alarmSeconds: number },
): DistributorReport {
  const report = warningReport(
    (message, details) => logger.warn(message, details),
    (summary) => {
      logger.info('Distribution pass', { pass: summary });
      const { lines, overBound } = waitReport(summary.targets, waits.alarmSeconds * 1000);
      for (const line of lines) logger.info('Staging wait', { ...line });
      const overText = 'Messages waited in staging longer than DISTRIBUTOR_WAIT_ALARM_SECONDS';
      for (const over of overBound) logger.warn(overText, { ...over, boundSeconds: waits.alarmSeconds });
      // Alarmed (infra/cloudwatch.yml): a tenant's messages waited longer than the bound.
      const queuesOverBound = overBound.reduce((n, o) => n + o.queues, 0);
      metrics.addMetric('StagingWaitsOverBound', MetricUnit.Count, queuesOverBound);
      metrics.addMetric('MessagesMoved', MetricUnit.Count, summary.moved);
      metrics.addMetric('MessagesRequeued', MetricUnit.Count, summary.requeued);
      // Alarmed (infra/cloudwatch.yml): a parked message waits for an operator.
      metrics.addMetric('MessagesParked', MetricUnit.Count, summary.parked);
      metrics.addMetric('PassDuration', MetricUnit.Milliseconds, summary.durationMs);
      const count = (outcome: string) => summary.targets.filter((t) => t.outcome === outcome).length;
      metrics.addMetric('TargetsLeasedElsewhere', MetricUnit.Count, count('leased-elsewhere'));
      metrics.addMetric('TargetsFailed', MetricUnit.Count, count('failed'));
      metrics.addMetric('TargetsMissing', MetricUnit.Count, count('target-missing'));
      for (const target of summary.targets) {
        if (target.outcome === 'leased-elsewhere') continue;
        // A single metric flushes at once and then forgets its dimensions: one per figure.
        const perTarget = (
          name: string,
          value: number,
          unit: Parameters<typeof metrics.addMetric>[1] = MetricUnit.Count,
        ) => metrics.singleMetric().addDimension('target', target.target).addMetric(name, unit, value);
        perTarget('TargetCapacity', target.capacity ?? 0);
        perTarget('TargetPlanned', target.planned);
        perTarget('TargetMoved', target.moved);
        // Only for a pass that measured a wait: no datapoint is not a zero wait.
        if (target.wait) {
          perTarget('TargetWaitP50', target.wait.p50Ms, MetricUnit.Milliseconds);
          perTarget('TargetWaitP99', target.wait.p99Ms, MetricUnit.Milliseconds);
          perTarget('TenantWaitMax', target.wait.maxMs, MetricUnit.Milliseconds);
        }
      }
    },
    (message, details) => logger.info(message, details),
  );
  return {
    ...report,
    // Alarmable: the pass ran on controls that may be stale (a pause an operator set may not hold).
    controlsUnreadable(error) {
      report.controlsUnreadable(error);
      metrics.addMetric('ControlsUnreadable', MetricUnit.Count, 1);
    },
    controlSkipped(key, problem) {
      report.controlSkipped(key, problem);
      metrics.addMetric('ControlEntriesSkipped', MetricUnit.Count, 1);
    },
    followUpFailed(target, error) {
      report.followUpFailed(target, error);
      // The router counts its failed requests under the same name.
      metrics.addMetric('PassRequestsFailed', MetricUnit.Count, 1);
    },
  };
}

/** What a distributor reads and moves through. */
export interface DistributorAdapters {
  /** A confirm channel on the container's AMQP connection. */
  openChannel: OpenChannel;
  /** The management API's listing of the vhost. */
  listQueues: () => Promise<QueueInfo[]>;
  /** The management API's policies and operator policies of the vhost. */
  listPolicies: () => Promise<QueuePolicies>;
  /** DynamoDB, for the leases, rotations, tenant controls and tuned lengths in DISTRIBUTOR_TABLE. */
  doc: DynamoDBDocumentClient;
  /** Messages per second a target's consumers took over a window (ManagementClient.consumptionRate). */
  consumptionRate: TuningDeps['rate'];
  /** Starts requested passes; without it passes run on the schedule alone. */
  trigger?: PassTrigger;
}

/** The configuration as the distributor's code reads it: the one place its environment names are translated. */
export function distributorSettings(config: DistributorConfig): DistributorSettings {
  return {
    planner: config.DISTRIBUTOR_PLANNER,
    defaultMaxLength: config.DISTRIBUTOR_DEFAULT_MAX_LENGTH,
    targets: config.DISTRIBUTOR_TARGETS,
    weights: config.DISTRIBUTOR_WEIGHTS,
    refillThresholdPercent: config.DISTRIBUTOR_REFILL_THRESHOLD_PERCENT,
    missingTarget: config.DISTRIBUTOR_MISSING_TARGET,
    newTargetArguments: config.DISTRIBUTOR_NEW_TARGET_ARGUMENTS,
    moveConcurrency: config.DISTRIBUTOR_MOVE_CONCURRENCY,
    maxPrefetch: config.DISTRIBUTOR_MAX_PREFETCH,
    safetyMarginMs: config.DISTRIBUTOR_SAFETY_MARGIN_MS,
    idleStopMs: config.DISTRIBUTOR_IDLE_STOP_MS,
    followUpDelayMs: config.DISTRIBUTOR_FOLLOW_UP_DELAY_MS,
    followUpMaxDelayMs: config.DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS,
  };
}

/** The distributor over given adapters: the container's (below), or a test's on its own vhost and table. */
export function buildDistributor(
  config: DistributorConfig,
  adapters: DistributorAdapters,
  report: DistributorReport,
): Distributor {
  return createDistributor({
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
    requestPass: passRequests(passRequestSettingsOf(config), adapters.doc, adapters.trigger),
  });
}

export interface DistributorServiceOptions {
  /** The management API's fetch (a bench counts its requests). */
  fetch?: typeof fetch;
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
  const passSettings = passRequestSettingsOf(config);
  const trigger = lambdaPassTrigger(passSettings);
  const distributor = buildDistributor(
    config,
    {
      openChannel: () => amqp.openConfirmChannel(),
      listQueues: () => management.listQueues(),
      listPolicies: () => management.listPolicies(),
      doc,
      consumptionRate: (target, windowSeconds) => management.consumptionRate(target, windowSeconds),
      trigger,
    },
    report,
  );
  return {
    runPass: distributor.runPass,
    async close() {
      await amqp.close();
      doc.destroy();
      trigger?.destroy();
    },
  };
}

/**
 * One invocation: one distribution pass (SPEC §3), scheduled over every target or requested over one.
 * The handler's core; the latency bench runs it without the logging middlewares.
 */
export function distributorInvocation(
  service: Pick<ReturnType<typeof createDistributorService>, 'runPass'>,
  config: Pick<DistributorConfig, 'DISTRIBUTOR_SAFETY_MARGIN_MS'>,
  report: Pick<DistributorReport, 'requestDelayClamped'>,
) {
  return async (event: ScheduledEvent | PassRequestEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const request = parsePassRequestEvent(event);
    if (request && request.delayMs > 0) {
      if (request.delayMs > MAX_PASS_DELAY_MS) report.requestDelayClamped(request.delayMs, MAX_PASS_DELAY_MS);
      // A follow-up waits for the workers to make room; never into the time the pass needs.
      const budget = context.getRemainingTimeInMillis() - 2 * config.DISTRIBUTOR_SAFETY_MARGIN_MS;
      const waitMs = Math.max(0, Math.min(request.delayMs, MAX_PASS_DELAY_MS, budget));
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
    return service.runPass(context.getRemainingTimeInMillis(), request);
  };
}

/** The distributor as a Lambda function (functions/distributor.ts): scheduled passes and passes on request. */
export const distributorFunction: FunctionDefinition<
  DistributorConfig,
  ScheduledEvent | PassRequestEvent,
  PassSummary
> = {
  name: 'distributor',
  connections: rabbitmqConnections,
  load: loadDistributorConfig,
  build(config, observability) {
    const report = powertoolsDistributorReport(observability, { alarmSeconds: config.DISTRIBUTOR_WAIT_ALARM_SECONDS });
    const service = createDistributorService(config, report);
    return { handle: distributorInvocation(service, config, report), close: service.close };
  },
};
