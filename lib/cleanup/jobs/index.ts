import type { Pool } from 'pg';
import { ConfigError } from '../../platform/errors';
import type { JobDefinition } from '../engine/job-definition';
import { RepositoryDeletions } from '../nxrg/repository-deletions';
import { DeceasedDocuments } from '../nxrg/status90';
import type { NxrgColumns } from '../nxrg/tables';
import { ExpiredDocuments } from '../nxrg/timebased';
import { OpenxdsRepository } from '../openxds/repository';
import type { JobReport } from '../report';
import type { JobSettings } from '../settings';
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

/** The definition a cleanup function runs, from its checked settings, on `databases`. */
export function buildJob(settings: JobSettings, { nxrg, openxds }: JobDatabases, report: JobReport): JobDefinition {
  switch (settings.name) {
    case TIMEBASED_JOB: {
      const { config } = settings;
      const registry = new ExpiredDocuments(nxrg, config.names);
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
    }
    case STATUS90_JOB: {
      const { config } = settings;
      const registry = new DeceasedDocuments(nxrg, config.names, config.deceasedStatus);
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
    }
    case REPOSITORY_JOB: {
      const { config } = settings;
      const registry = new RepositoryDeletions(nxrg, config.names);
      const repository = new OpenxdsRepository(openxds, config.openxdsNames);
      return {
        ...repositoryJob({ config, registry, repository, report }),
        verify: verifying(
          () => registry.schemaProblems({ documents: ['id'], deletedDocuments: ['documentId', 'openxdsDeletedAt'] }),
          () => repository.schemaProblems(),
        ),
      };
    }
  }
}
