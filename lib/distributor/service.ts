import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { documentClient } from '../aws/dynamo';
import { dynamoClientSettings, type PassRequestConfig } from '../config/common';
import type { DistributorConfig } from '../config/distributor';
import { errorText } from '../errors';
import { amqpUser } from '../rabbitmq/amqp-url';
import { AmqpSession } from '../rabbitmq/connection';
import { ManagementClient, type QueueInfo } from '../rabbitmq/management';
import { functionHandler } from '../runtime/lambda';
import type { Observability } from '../runtime/observability';
import {
  createDistributor,
  type Distributor,
  type DistributorReport,
  type PassSummary,
  type TuningDeps,
} from './distributor';
import { LambdaPassTrigger } from './lambda-pass-trigger';
import type { OpenChannel } from './mover';
import { passRequester, type RequestPass, schedulesOnly } from './pass-requests';
import { type PassRequestEvent, type PassTrigger, parsePassRequestEvent } from './pass-trigger';
import { DynamoDistributorState } from './state-store';
import { DynamoTenantControlStore } from './tenant-control-store';
import { DynamoTunedLengthStore } from './tuned-length-store';

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
    leaseNotReleased: (target, error) =>
      warn('Could not release the lease; it expires by itself', { target, error: errorText(error) }),
    followUpFailed: (target, error) =>
      warn("Could not ask for the target's next pass; the schedule's next pass covers it", {
        target,
        error: errorText(error),
      }),
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
 * `target` dimension (targets are few; tenants are never a dimension).
 */
export function powertoolsDistributorReport({ logger, metrics }: Observability): DistributorReport {
  return warningReport(
    (message, details) => logger.warn(message, details),
    (summary) => {
      logger.info('Distribution pass', { pass: summary });
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
        const perTarget = (name: string, value: number) =>
          metrics.singleMetric().addDimension('target', target.target).addMetric(name, MetricUnit.Count, value);
        perTarget('TargetCapacity', target.capacity ?? 0);
        perTarget('TargetPlanned', target.planned);
        perTarget('TargetMoved', target.moved);
      }
    },
    (message, details) => logger.info(message, details),
  );
}

/** What a distributor reads and moves through. */
export interface DistributorAdapters {
  /** A confirm channel on the container's AMQP connection. */
  openChannel: OpenChannel;
  /** The management API's listing of the vhost. */
  listQueues: () => Promise<QueueInfo[]>;
  /** DynamoDB, for the leases, rotations, tenant controls and tuned lengths in DISTRIBUTOR_TABLE. */
  doc: DynamoDBDocumentClient;
  /** Messages per second a target's consumers took over a window (ManagementClient.consumptionRate). */
  consumptionRate: TuningDeps['rate'];
  /** Starts requested passes; without it passes run on the schedule alone. */
  trigger?: PassTrigger;
}

/**
 * How a function asks for passes: through the lease items of DISTRIBUTOR_TABLE and an async invoke
 * of DISTRIBUTOR_FUNCTION_NAME (or the given trigger); on the schedule alone when neither is set.
 */
export function passRequests(
  config: PassRequestConfig,
  doc: DynamoDBDocumentClient,
  trigger: PassTrigger | undefined,
): RequestPass {
  if (trigger === undefined || config.DISTRIBUTOR_TABLE === undefined) return schedulesOnly;
  const state = new DynamoDistributorState(doc, config.DISTRIBUTOR_TABLE);
  return passRequester({ state, trigger, graceMs: config.DISTRIBUTOR_REQUEST_GRACE_MS });
}

/** The async invoke of DISTRIBUTOR_FUNCTION_NAME, if set. */
export function lambdaPassTrigger(config: PassRequestConfig): LambdaPassTrigger | undefined {
  if (config.DISTRIBUTOR_FUNCTION_NAME === undefined) return undefined;
  return new LambdaPassTrigger(config.DISTRIBUTOR_FUNCTION_NAME, {
    region: config.AWS_REGION,
    endpoint: config.LAMBDA_ENDPOINT,
  });
}

/** The distributor over given adapters: the container's (below), or a test's on its own vhost and table. */
export function buildDistributor(
  config: DistributorConfig,
  adapters: DistributorAdapters,
  report: DistributorReport,
): Distributor {
  return createDistributor({
    settings: config,
    listQueues: adapters.listQueues,
    openChannel: adapters.openChannel,
    state: new DynamoDistributorState(adapters.doc, config.DISTRIBUTOR_TABLE),
    publisherUser: amqpUser(config.AMQP_URL),
    controls: new DynamoTenantControlStore(adapters.doc, config.DISTRIBUTOR_TABLE),
    tuning: {
      rate: adapters.consumptionRate,
      lengths: new DynamoTunedLengthStore(adapters.doc, config.DISTRIBUTOR_TABLE),
    },
    report,
    requestPass: passRequests(config, adapters.doc, adapters.trigger),
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
  const trigger = lambdaPassTrigger(config);
  const distributor = buildDistributor(
    config,
    {
      openChannel: () => amqp.openConfirmChannel(),
      listQueues: () => management.listQueues(),
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
) {
  return async (event: ScheduledEvent | PassRequestEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const request = parsePassRequestEvent(event);
    if (request && request.delayMs > 0) {
      // A follow-up waits for the workers to make room; never into the time the pass needs.
      const budget = context.getRemainingTimeInMillis() - 2 * config.DISTRIBUTOR_SAFETY_MARGIN_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(request.delayMs, budget))));
    }
    return service.runPass(context.getRemainingTimeInMillis(), request);
  };
}

/**
 * The distributor's Lambda handler (functions/distributor.ts): its own logger and metrics, its
 * service built once; `close` ends its connections (when a rotated password replaces it).
 */
export function distributorHandler(config: DistributorConfig) {
  return functionHandler<ScheduledEvent | PassRequestEvent, PassSummary>('distributor', (observability) => {
    const service = createDistributorService(config, powertoolsDistributorReport(observability));
    return { handle: distributorInvocation(service, config), close: service.close };
  });
}
