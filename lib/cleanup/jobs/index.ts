import { Pool } from 'pg';
import type { CleanupConfig } from '../../config/cleanup';
import { loadRepositoryJobConfig, loadStatus90JobConfig, loadTimebasedJobConfig } from '../../config/cleanup-jobs';
import type { Env } from '../../config/env';
import { ConfigError } from '../../errors';
import { type NxrgColumns, NxrgRegistry } from '../../nxrg/registry';
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

/** Every registry cleanup writes the whole deletion record. */
const deletionRecord: NxrgColumns['deletedDocuments'] = ['documentId', 'deletedAt', 'reason', 'openxdsDeletedAt'];

/** A job's `verify`: collects the schema problems of every database it touches and refuses them all at once. */
const verifying =
  (...checks: (() => Promise<string[]>)[]) =>
  async (): Promise<void> => {
    const problems = (await Promise.all(checks.map((check) => check()))).flat();
    if (problems.length > 0) {
      throw new ConfigError(
        problems,
        'Fix NXRG_NAMES / OPENXDS_NAMES, or the database (infra/sql has the expected tables), then redeploy.',
      );
    }
  };

const factories: Readonly<Record<CleanupJobName, JobFactory>> = {
  [TIMEBASED_JOB]: (env, { nxrg }, report) => {
    const config = loadTimebasedJobConfig(env);
    const registry = new NxrgRegistry(nxrg, config.names, config.deceasedStatus);
    const bases = new Set(config.documentTypes.map((rule) => rule.basis));
    const times = [
      ...(bases.has('created') ? ['createdAt' as const] : []),
      ...(bases.has('service') ? ['serviceTime' as const] : []),
    ];
    return {
      ...timebasedJob({ config, registry, report }),
      verify: verifying(() =>
        registry.schemaProblems({ documents: ['id', 'type', ...times], deletedDocuments: deletionRecord }),
      ),
    };
  },
  [STATUS90_JOB]: (env, { nxrg }, report) => {
    const config = loadStatus90JobConfig(env);
    const registry = new NxrgRegistry(nxrg, config.names, config.deceasedStatus);
    return {
      ...status90Job({ config, registry, report }),
      verify: verifying(() =>
        registry.schemaProblems({
          citizens: ['cpr', 'status'],
          documents: ['id', 'citizenId'],
          deletedDocuments: deletionRecord,
        }),
      ),
    };
  },
  [REPOSITORY_JOB]: (env, { nxrg, openxds }, report) => {
    const config = loadRepositoryJobConfig(env);
    const registry = new NxrgRegistry(nxrg, config.names, config.deceasedStatus);
    const repository = new OpenxdsRepository(openxds, config.openxdsNames);
    return {
      ...repositoryJob({ config, registry, repository, report }),
      verify: verifying(
        () => registry.schemaProblems({ documents: ['id'], deletedDocuments: ['documentId', 'openxdsDeletedAt'] }),
        () => repository.schemaProblems(),
      ),
    };
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
