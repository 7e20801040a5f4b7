import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { documentClient } from '../platform/aws';
import { amqpUser } from '../platform/config';
import { errorText } from '../platform/errors';
import { rabbitmqConnections } from '../platform/secrets';
import { AmqpSession } from '../rabbitmq/connection';
import { ManagementClient } from '../rabbitmq/management';
import { readyCounts } from '../rabbitmq/ready-counts';
import type { RouterConfig } from '../routing/config';
import { loadRouterConfig, skipWindowMsOf } from '../routing/config';
import { DirectGrants } from '../routing/direct-grants';
import { DynamoTenantCounterStore, type TenantCounterStore } from '../routing/priority/counter-store';
import { defaultMemoryCapacity, RememberingCounterStore } from '../routing/priority/remembering-store';
import type { RouterReport } from '../routing/report';
import { createRouter } from '../routing/router';
import type { RouterSettings } from '../routing/settings';
import { CachedStagingQueues } from '../routing/staging-queues';
import { directRoutingOf, dynamoClientSettings, passRequestSettingsOf } from '../settings/common';
import { DynamoStagingRegistry } from '../staging/staging-registry';
import { passRequests } from '../work-board/adapters';
import { lambdaPassTrigger } from '../work-board/pass-trigger';
import { DynamoWorkBoard } from '../work-board/work-board-store';
import type { FunctionDefinition, Observability } from './lambda-function';

/**
 * The router's composition root, the one file of the part that touches Powertools: it builds the
 * adapters from the configuration once per container and hands the router a report.
 */

/** The router's settings from its environment's configuration, once per container. */
export function routerSettings(config: RouterConfig): RouterSettings {
  return {
    targets: config.ROUTER_TARGETS,
    missingTenant: config.ROUTER_MISSING_TENANT,
    priorityRules: {
      resetIntervalMs: config.TENANT_PRIORITY_RESET_SECONDS * 1000,
      thresholds: config.TENANT_PRIORITY_THRESHOLDS,
      quietLevel: config.TENANT_PRIORITY_QUIET_LEVEL,
    },
    amqpPriorities: config.TENANT_PRIORITY_AMQP_PRIORITIES,
    tenantTable: config.TENANT_TABLE,
    stagingQueueCacheMs: config.tuning.stagingQueueCacheMs,
    confirmTimeoutMs: config.tuning.confirmTimeoutMs,
    stagingPriorities: config.ROUTER_STAGING_PRIORITIES,
    ...(config.STAGING_TABLE === undefined ? {} : { stagingTable: config.STAGING_TABLE }),
    stagingTouchMs: config.tuning.stagingTouchMs,
    publisherUser: amqpUser(config.AMQP_URL),
    ...(directRoutingOf(config).mode === 'granted' ? { direct: directRoutingOf(config) } : {}),
  };
}

/** Logs each failed record by id, field and reason (never its body); EMF counts with no per-tenant dimension. */
export function powertoolsRouterReport({ logger, metrics }: Observability): RouterReport {
  return {
    failed: (failure) => logger.warn('After-process event not routed', { ...failure }),
    counted: (metric, count) => metrics.addMetric(metric, MetricUnit.Count, count),
    // One line per tenant per batch: the Contributor Insights rule of infra/cloudwatch.yml reads it.
    tenantRouted: (routed) => logger.info('Routed', { ...routed }),
    // Apart from 'Routed', so that the Contributor Insights rule on tenants does not see them.
    tenantlessRouted: (routed) => logger.info('Routed without a tenant', { ...routed }),
    nameShortened: (shortened) =>
      logger.warn('Staging queue name would pass 255 bytes; routed under a shorter one', { ...shortened }),
    passRequestFailed: (target, error) => {
      logger.warn('Staged, but could not ask for a distributor pass; the schedule moves them', {
        target,
        error: errorText(error),
      });
      metrics.addMetric('PassRequestsFailed', MetricUnit.Count, 1);
    },
    directRoutingUnread: (error) => {
      logger.warn('Could not read direct-routing grants or target depths; the batch is staged', {
        error: errorText(error),
      });
      metrics.addMetric('DirectRoutingUnread', MetricUnit.Count, 1);
    },
    stagingQueueKept: (kept) =>
      logger.warn('Staging queue exists with arguments unlike its target; using it as it is', { ...kept }),
  };
}

export interface RouterServiceOptions {
  /** The tenant counters (a bench keeps them in memory to time the router's work without DynamoDB). */
  counters?: TenantCounterStore;
  /** The management API's fetch (a bench counts its requests). */
  fetch?: typeof fetch;
}

/**
 * The router of one Lambda container, built once from its configuration: one DynamoDB client,
 * one AMQP connection (reopened after a broker restart), one staging-queue cache.
 */
export function createRouterService(config: RouterConfig, report: RouterReport, options: RouterServiceOptions = {}) {
  const settings = routerSettings(config);
  const doc = documentClient(dynamoClientSettings(config));
  const passSettings = passRequestSettingsOf(config, config.tuning.requestGraceMs);
  const trigger = lambdaPassTrigger(passSettings);
  const amqp = new AmqpSession(config.AMQP_URL);
  const management = new ManagementClient(config.RABBITMQ_MANAGEMENT_URL, config.RABBITMQ_VHOST, options.fetch);
  const stagingQueues = new CachedStagingQueues(
    amqp,
    management,
    settings.targets,
    settings.stagingQueueCacheMs,
    report,
    {
      priorities: settings.stagingPriorities,
      ...(settings.stagingTable === undefined
        ? {}
        : { registry: new DynamoStagingRegistry(doc, settings.stagingTable), touchPeriodMs: settings.stagingTouchMs }),
    },
  );
  const board = passSettings.table === undefined ? undefined : new DynamoWorkBoard(doc, passSettings.table);
  const route = createRouter({
    settings,
    counters:
      options.counters ??
      new RememberingCounterStore(
        new DynamoTenantCounterStore(doc, settings.tenantTable, settings.priorityRules),
        settings.priorityRules,
        { skipWindowMs: skipWindowMsOf(config), capacity: defaultMemoryCapacity },
      ),
    amqp,
    stagingQueues,
    report,
    requestPass: passRequests(passSettings, doc, trigger),
    ...(settings.direct !== undefined && board !== undefined
      ? {
          direct: new DirectGrants({
            settings: settings.direct,
            grants: (targets) => board.grants(targets),
            // On channels of their own: a missing target's 404 closes only its reader's.
            depths: (targets) => readyCounts(() => amqp.openConfirmChannel(), targets),
          }),
        }
      : {}),
  });
  return {
    route,
    async close() {
      await amqp.close();
      doc.destroy();
      trigger?.destroy();
    },
  };
}

/** The router as a Lambda function (functions/router.ts): SQS batches of after-process events. */
export const routerFunction: FunctionDefinition<RouterConfig, SQSEvent, SQSBatchResponse> = {
  name: 'router',
  connections: rabbitmqConnections,
  load: loadRouterConfig,
  build(config, observability) {
    const service = createRouterService(config, powertoolsRouterReport(observability));
    return { handle: service.route, close: service.close };
  },
};
