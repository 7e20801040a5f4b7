import type { Pool } from 'pg';
import { loadRepositoryJobConfig, loadStatus90JobConfig, loadTimebasedJobConfig } from '../../config/cleanup-jobs';
import type { Env } from '../../config/env';
import { NxrgRegistry } from '../../nxrg/registry';
import { OpenxdsRepository } from '../../openxds/repository';
import type { JobDefinition } from '../engine/types';
import { logDeletions, type DeletionReport } from './deletions';
import { REPOSITORY_JOB, repositoryJob } from './repository';
import { STATUS90_JOB, status90Job } from './status90';
import { TIMEBASED_JOB, timebasedJob } from './timebased';

/** The databases the jobs work on (pg pools connect lazily, so building one at cold start is free). */
export interface JobDatabases {
  nxrg: Pool;
  openxds: Pool;
}

type JobFactory = (env: Env, databases: JobDatabases, report?: DeletionReport) => JobDefinition;

/**
 * The three cleanup jobs by stack name. Each factory validates the job's configuration (throwing a
 * ConfigError naming every bad setting), so a function calls it at cold start.
 */
export const cleanupJobs: Readonly<Record<string, JobFactory>> = {
  [TIMEBASED_JOB]: (env, { nxrg }, report = logDeletions) => {
    const config = loadTimebasedJobConfig(env);
    return timebasedJob({ config, registry: new NxrgRegistry(nxrg, config.names, config.deceasedStatus), report });
  },
  [STATUS90_JOB]: (env, { nxrg }, report = logDeletions) => {
    const config = loadStatus90JobConfig(env);
    return status90Job({ config, registry: new NxrgRegistry(nxrg, config.names, config.deceasedStatus), report });
  },
  [REPOSITORY_JOB]: (env, { nxrg, openxds }, report = logDeletions) => {
    const config = loadRepositoryJobConfig(env);
    return repositoryJob({
      config,
      registry: new NxrgRegistry(nxrg, config.names, config.deceasedStatus),
      repository: new OpenxdsRepository(openxds, config.openxdsNames),
      report,
    });
  },
};
