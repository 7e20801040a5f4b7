import { Pool } from 'pg';
import type { CleanupConfig } from '../../config/cleanup';
import { loadRepositoryJobConfig, loadStatus90JobConfig, loadTimebasedJobConfig } from '../../config/cleanup-jobs';
import type { Env } from '../../config/env';
import { NxrgRegistry } from '../../nxrg/registry';
import { OpenxdsRepository } from '../../openxds/repository';
import { logger } from '../../runtime/observability';
import type { JobDefinition } from '../engine/types';
import { type DeletionReport, logDeletions } from './deletions';
import { REPOSITORY_JOB, repositoryJob } from './repository';
import { STATUS90_JOB, status90Job } from './status90';
import { TIMEBASED_JOB, timebasedJob } from './timebased';

export const cleanupJobNames = [TIMEBASED_JOB, STATUS90_JOB, REPOSITORY_JOB] as const;
export type CleanupJobName = (typeof cleanupJobNames)[number];

/** The databases the jobs work on. */
export interface JobDatabases {
  nxrg: Pool;
  openxds: Pool;
}

/**
 * One small pool per database per container. pg connects lazily, so building them at cold start
 * costs nothing; a step uses one connection of each at most. A connection attempt or statement
 * that takes longer than CLEANUP_DATABASE_TIMEOUT_SECONDS fails (client and server side), so a
 * hung database ends the step before the Lambda timeout instead of freezing it mid-statement.
 */
export function jobDatabases(
  config: Pick<CleanupConfig, 'NXRG_DATABASE_URL' | 'OPENXDS_DATABASE_URL' | 'CLEANUP_DATABASE_TIMEOUT_SECONDS'>,
): JobDatabases {
  const timeoutMs = config.CLEANUP_DATABASE_TIMEOUT_SECONDS * 1000;
  const pool = (database: string, connectionString: string) =>
    new Pool({
      connectionString,
      max: 2,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
    }).on('error', (error) =>
      // An idle connection dropped by the server: the pool replaces it; without a listener it would crash the container.
      logger.warn('idle database connection failed', { database, error: error.message }),
    );
  return { nxrg: pool('nxrg', config.NXRG_DATABASE_URL), openxds: pool('openxds', config.OPENXDS_DATABASE_URL) };
}

type JobFactory = (env: Env, databases: JobDatabases, report: DeletionReport) => JobDefinition;

const factories: Readonly<Record<CleanupJobName, JobFactory>> = {
  [TIMEBASED_JOB]: (env, { nxrg }, report) => {
    const config = loadTimebasedJobConfig(env);
    return timebasedJob({ config, registry: new NxrgRegistry(nxrg, config.names, config.deceasedStatus), report });
  },
  [STATUS90_JOB]: (env, { nxrg }, report) => {
    const config = loadStatus90JobConfig(env);
    return status90Job({ config, registry: new NxrgRegistry(nxrg, config.names, config.deceasedStatus), report });
  },
  [REPOSITORY_JOB]: (env, { nxrg, openxds }, report) => {
    const config = loadRepositoryJobConfig(env);
    return repositoryJob({
      config,
      registry: new NxrgRegistry(nxrg, config.names, config.deceasedStatus),
      repository: new OpenxdsRepository(openxds, config.openxdsNames),
      report,
    });
  },
};

/**
 * The job registry: the definition each cleanup function runs. Validates the job's own settings in
 * `env` (a ConfigError naming every bad setting), so a function calls it at cold start.
 */
export function cleanupJob(
  name: CleanupJobName,
  env: Env,
  databases: JobDatabases,
  report: DeletionReport = logDeletions,
): JobDefinition {
  return factories[name](env, databases, report);
}
