import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ScheduledEvent } from 'aws-lambda';
import { Pool } from 'pg';
import { type CleanupConfig, type EngineTuning, loadCleanupConfig } from '../cleanup/config';
import type { StepOutcome } from '../cleanup/engine/engine';
import type { JobDefinition } from '../cleanup/engine/job-definition';
import { buildJob, type CleanupJobName, type JobDatabases } from '../cleanup/jobs';
import {
  type JobTuning,
  loadRepositoryJobConfig,
  loadStatus90JobConfig,
  loadTimebasedJobConfig,
} from '../cleanup/jobs/config';
import { chunk } from '../cleanup/jobs/deletions';
import { REPOSITORY_JOB } from '../cleanup/jobs/repository';
import { STATUS90_JOB } from '../cleanup/jobs/status90';
import { TIMEBASED_JOB } from '../cleanup/jobs/timebased';
import type { CleanupReport, JobReport } from '../cleanup/report';
import type { DatabaseSettings, JobSettings, StepSettings } from '../cleanup/settings';
import { createStepRunner } from '../cleanup/step-runner';
import { documentClient } from '../platform/aws';
import type { Env } from '../platform/config';
import { errorText } from '../platform/errors';
import { databaseConnections } from '../platform/secrets';
import { dynamoClientSettings } from '../settings/common';
import type { FunctionDefinition, Observability } from './lambda-function';

/**
 * Deleted ids per log line: a range of 10,000 UUIDs is about 390 KB of JSON, over CloudWatch Logs'
 * 256 KB event limit, which would cut the audit trail; 2,000 is about 80 KB.
 */
const IDS_PER_LOG_LINE = 2_000;

/** The cleanup part's fixed values a test or bench may replace (engine and job alike; never from the environment). */
export type CleanupTuning = EngineTuning & JobTuning;

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

/** The engine's settings in the checked configuration (the one place their environment names are read). */
export function stepSettings(config: CleanupConfig): StepSettings {
  return {
    table: config.CLEANUP_TABLE,
    dryRun: config.CLEANUP_DRY_RUN,
    maxAttempts: config.tuning.maxAttempts,
    leaseMs: config.tuning.leaseMs,
    maxPayloadBytes: config.tuning.maxPayloadBytes,
    stepsPerInvocation: config.tuning.stepsPerInvocation,
    timeBudgetMs: config.tuning.timeBudgetMs,
  };
}

/** Reads and checks the engine's settings in `env` (a ConfigError naming every bad one); `tuning` as `loadCleanupConfig`'s. */
export const loadStepSettings = (env: Env, tuning: Partial<CleanupTuning> = {}): StepSettings =>
  stepSettings(loadCleanupConfig(env, tuning));

/** The databases' settings in the checked configuration. */
export function databaseSettings(config: CleanupConfig): DatabaseSettings {
  return {
    nxrgUrl: config.NXRG_DATABASE_URL,
    openxdsUrl: config.OPENXDS_DATABASE_URL,
    timeoutMs: config.tuning.databaseTimeoutMs,
  };
}

/**
 * Reads and checks job `name`'s own settings in `env`: a ConfigError naming every bad setting. No
 * adapter is built, so a function calls it at cold start.
 */
export function loadJobSettings(name: CleanupJobName, env: Env, tuning: Partial<CleanupTuning> = {}): JobSettings {
  switch (name) {
    case TIMEBASED_JOB:
      return { name, config: loadTimebasedJobConfig(env, tuning) };
    case STATUS90_JOB:
      return { name, config: loadStatus90JobConfig(env, tuning) };
    case REPOSITORY_JOB:
      return { name, config: loadRepositoryJobConfig(env, tuning) };
  }
}

/** Job `name`'s definition from its settings in `env` (checked as `loadJobSettings` does), on `databases`. */
export function cleanupJob(
  name: CleanupJobName,
  env: Env,
  databases: JobDatabases,
  report: JobReport,
  tuning: Partial<CleanupTuning> = {},
): JobDefinition {
  return buildJob(loadJobSettings(name, env, tuning), databases, report);
}

/**
 * One small pool per database per container. pg connects lazily, so building them at cold start
 * costs nothing; a step uses two at most (a time-based step walks the next range while it deletes
 * one). A connection attempt or statement that takes longer than the database timeout
 * (at most half the function's timeout) fails (client and server side), so a hung database ends the step
 * before the Lambda timeout instead of freezing it mid-statement.
 */
export function jobDatabases(
  { nxrgUrl, openxdsUrl, timeoutMs }: DatabaseSettings,
  report: Pick<CleanupReport, 'connectionFailed'>,
): JobDatabases {
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
  return { nxrg: pool('nxrg', nxrgUrl), openxds: pool('openxds', openxdsUrl) };
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
export function loadCleanupFunctionConfig(
  name: CleanupJobName,
  env: Env,
  tuning: Partial<CleanupTuning> = {},
): CleanupFunctionConfig {
  return { cleanup: loadCleanupConfig(env, tuning), job: loadJobSettings(name, env, tuning) };
}

/** One cleanup job of one Lambda container, built once from its checked configuration: its database pools, its DynamoDB client. */
export function createCleanupService(config: CleanupFunctionConfig, observability: Observability) {
  const report = createCleanupReport(observability, config.job.name);
  const databases = jobDatabases(databaseSettings(config.cleanup), report);
  const job = buildJob(config.job, databases, report);
  const doc = documentClient(dynamoClientSettings(config.cleanup));
  return {
    runSteps: createStepRunner(job, stepSettings(config.cleanup), { doc, report }),
    async close() {
      await Promise.all([databases.nxrg.end(), databases.openxds.end()]);
      doc.destroy();
    },
  };
}

/**
 * One cleanup job as a Lambda function (functions/*Cleanup.ts): one or more stack steps per
 * scheduled invocation (SPEC §4), its database credentials from Secrets Manager where configured.
 */
export function cleanupFunction(
  name: CleanupJobName,
  tuning: Partial<CleanupTuning> = {},
): FunctionDefinition<CleanupFunctionConfig, ScheduledEvent, unknown> {
  return {
    name,
    connections: databaseConnections,
    load: (env) => loadCleanupFunctionConfig(name, env, tuning),
    build(config, observability) {
      const service = createCleanupService(config, observability);
      return { handle: service.runSteps, close: service.close };
    },
  };
}
