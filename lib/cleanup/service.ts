import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ScheduledEvent } from 'aws-lambda';
import { Pool } from 'pg';
import { documentClient } from '../aws/dynamo';
import { type CleanupConfig, loadCleanupConfig } from '../config/cleanup';
import { dynamoClientSettings } from '../config/common';
import type { Env } from '../config/env';
import { errorText } from '../errors';
import { functionHandler } from '../runtime/lambda';
import type { Observability } from '../runtime/observability';
import { databaseConnections } from '../secrets/connections';
import { withSecrets } from '../secrets/with-secrets';
import type { StepOutcome } from './engine/engine';
import { buildJob, type CleanupJobName, type JobDatabases, type JobSettings, loadJobSettings } from './jobs';
import { chunk } from './jobs/deletions';
import type { CleanupReport } from './report';
import { createStepRunner } from './step-runner';

/**
 * Deleted ids per log line: a range of 10,000 UUIDs is about 390 KB of JSON, over CloudWatch Logs'
 * 256 KB event limit, which would cut the audit trail; 2,000 is about 80 KB.
 */
const IDS_PER_LOG_LINE = 2_000;

/** One count per outcome; the only dimension is the job, so the metric set stays bounded. */
const outcomeMetric: Record<StepOutcome, string> = {
  executed: 'OperationsExecuted',
  supplied: 'OperationsExecuted',
  failed: 'OperationsFailed',
  'dead-lettered': 'OperationsDeadLettered',
  'lease-lost': 'LeasesLost',
  busy: 'StepsBusy',
  'no-operations': 'StepsUnconfigured',
};

/**
 * A job's report on its own logger and metrics: a structured log line per step and per batch delete,
 * EMF metrics with the job as their one dimension, set once on this job's metrics object, so jobs
 * sharing a process (`npm start`) never mix dimensions.
 */
export function createCleanupReport({ logger, metrics }: Observability, job: string): CleanupReport {
  metrics.setDefaultDimensions({ job });
  return {
    stepped(result) {
      const level = result.outcome === 'dead-lettered' ? 'error' : result.outcome === 'failed' ? 'warn' : 'info';
      logger[level]('cleanup step', { ...result });
      metrics.addMetric(outcomeMetric[result.outcome], MetricUnit.Count, 1);
      if (result.fill) metrics.addMetric('Fills', MetricUnit.Count, 1);
      if (result.children > 0) metrics.addMetric('ChildrenPushed', MetricUnit.Count, result.children);
      metrics.addMetric('StepDuration', MetricUnit.Milliseconds, result.durationMs);
    },
    stepFailed(failedJob, error) {
      logger.error('cleanup step failed', { job: failedJob, error: errorText(error) });
    },
    deleted({ job: deletingJob, operation, dryRun, requested, documentIds }) {
      const message = dryRun ? 'dry run: would delete documents' : 'deleted documents';
      const count = documentIds.length;
      const parts = chunk(documentIds, IDS_PER_LOG_LINE);
      if (parts.length === 0) parts.push([]);
      parts.forEach((ids, index) => {
        const part = parts.length > 1 ? { part: `${index + 1}/${parts.length}` } : {};
        logger.info(message, { job: deletingJob, operation, dryRun, requested, count, ...part, documentIds: ids });
      });
      metrics.addMetric(dryRun ? 'DocumentsDryRunCounted' : 'DocumentsDeleted', MetricUnit.Count, documentIds.length);
    },
    dropped(operation) {
      logger.warn('document type is no longer configured; operation dropped', { ...operation });
    },
    connectionFailed(database, error) {
      logger.warn('idle database connection failed', { database, error: errorText(error) });
    },
  };
}

/**
 * One small pool per database per container. pg connects lazily, so building them at cold start
 * costs nothing; a step uses two at most (a time-based step walks the next range while it deletes
 * one). A connection attempt or statement that takes longer than CLEANUP_DATABASE_TIMEOUT_SECONDS
 * fails (client and server side), so a hung database ends the step before the Lambda timeout instead
 * of freezing it mid-statement.
 */
export function jobDatabases(
  config: Pick<CleanupConfig, 'NXRG_DATABASE_URL' | 'OPENXDS_DATABASE_URL' | 'CLEANUP_DATABASE_TIMEOUT_SECONDS'>,
  report: Pick<CleanupReport, 'connectionFailed'>,
): JobDatabases {
  const timeoutMs = config.CLEANUP_DATABASE_TIMEOUT_SECONDS * 1000;
  const pool = (database: string, connectionString: string) =>
    new Pool({
      connectionString,
      max: 2,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
    })
      // An idle connection dropped by the server: the pool replaces it; without a listener it would crash the container.
      .on('error', (error) => report.connectionFailed(database, error));
  return { nxrg: pool('nxrg', config.NXRG_DATABASE_URL), openxds: pool('openxds', config.OPENXDS_DATABASE_URL) };
}

/** Everything a cleanup function reads from its environment: the engine's settings and its job's own. */
export interface CleanupFunctionConfig {
  cleanup: CleanupConfig;
  job: JobSettings;
}

/**
 * Reads and checks a cleanup function's configuration, building nothing: the engine's settings
 * first, then the job's own (each a ConfigError naming every bad setting). Called at cold start.
 */
export function loadCleanupFunctionConfig(name: CleanupJobName, env: Env): CleanupFunctionConfig {
  return { cleanup: loadCleanupConfig(env), job: loadJobSettings(name, env) };
}

/** One cleanup job of one Lambda container, built once from its checked configuration: its database pools, its DynamoDB client. */
export function createCleanupService(config: CleanupFunctionConfig, observability: Observability) {
  const report = createCleanupReport(observability, config.job.name);
  const databases = jobDatabases(config.cleanup, report);
  const job = buildJob(config.job, databases, report);
  const doc = documentClient(dynamoClientSettings(config.cleanup));
  return {
    runSteps: createStepRunner(job, config.cleanup, { doc, report }),
    async close() {
      await Promise.all([databases.nxrg.end(), databases.openxds.end()]);
      doc.destroy();
    },
  };
}

/**
 * The Lambda handler of one cleanup job: one or more stack steps per scheduled invocation (SPEC §4).
 * Like the router and the distributor (functions/router.ts), its configuration is read and checked
 * at cold start without building anything; the service is built from it once, at once without
 * database secrets, or with them (lib/secrets) on the first invocation and again after a rotation.
 */
export function cleanupFunction(name: CleanupJobName, env: Env = process.env) {
  return withSecrets(
    env,
    databaseConnections,
    (e) => loadCleanupFunctionConfig(name, e),
    (config) =>
      functionHandler<ScheduledEvent, unknown>(name, (observability) => {
        const service = createCleanupService(config, observability);
        return { handle: service.runSteps, close: service.close };
      }),
  );
}
