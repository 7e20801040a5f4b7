import type { Pool } from 'pg';
import { loadRepositoryJobConfig, loadStatus90JobConfig, loadTimebasedJobConfig } from '../../config/cleanup-jobs';
import type { Env } from '../../config/env';
import { NxrgRegistry } from '../../nxrg/registry';
import { OpenxdsRepository } from '../../openxds/repository';
import type { JobDefinition } from '../engine/job-definition';
import type { JobReport } from '../report';
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

type JobFactory = (env: Env, databases: JobDatabases, report: JobReport) => JobDefinition;

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
export function cleanupJob(name: CleanupJobName, env: Env, databases: JobDatabases, report: JobReport): JobDefinition {
  return factories[name](env, databases, report);
}
