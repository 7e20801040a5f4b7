import { z } from 'zod';
import type { RepositoryJobConfig } from '../../config/cleanup-jobs';
import type { NxrgRegistry } from '../../nxrg/registry';
import type { OpenxdsRepository } from '../../openxds/repository';
import type { JobDefinition, Operation, OperationKind } from '../engine/job-definition';
import type { JobReport } from '../report';
import { batchDeleteKind, chunk, documentIds } from './deletions';

export const REPOSITORY_JOB = 'repository-cleanup';

/** The default operation; a continuation carries the keyset cursor of the next page. */
const pendingPayload = z.object({ after: z.string().min(1).nullable() });
const batchDeletePayload = z.object({ ids: documentIds });

export interface RepositoryJobDeps {
  config: Pick<RepositoryJobConfig, 'pageSize' | 'batchSize' | 'maxDeletesPerStep'>;
  registry: Pick<NxrgRegistry, 'pendingRepositoryPage' | 'settleRepositoryDeletions'>;
  repository: Pick<OpenxdsRepository, 'deleteDocuments'>;
  report: Pick<JobReport, 'deleted'>;
}

/**
 * repository-cleanup (SPEC §4): default → ids deleted in NXRG but not yet in OpenXDS → batch deletes
 * in OpenXDS, each re-checking the NXRG record and then marking it done.
 */
export function repositoryJob({ config, registry, repository, report }: RepositoryJobDeps): JobDefinition {
  const pendingKind: OperationKind<z.infer<typeof pendingPayload>> = {
    payload: pendingPayload,
    async execute({ after }) {
      const ids = await registry.pendingRepositoryPage(after, config.pageSize);
      const children: Operation[] = chunk(ids, config.batchSize).map((batch) => ({
        kind: 'batch-delete',
        payload: { ids: batch },
      }));
      if (ids.length === config.pageSize) children.push({ kind: 'default', payload: { after: ids[ids.length - 1]! } });
      return children;
    },
  };

  const batchDelete = batchDeleteKind(batchDeletePayload, {
    cap: config.maxDeletesPerStep,
    report,
    remove: (_batch, ids, deletion) =>
      registry.settleRepositoryDeletions(ids, deletion, (confirmed) =>
        repository.deleteDocuments(confirmed, deletion.dryRun),
      ),
  });

  return {
    name: REPOSITORY_JOB,
    defaultOperation: { kind: 'default', payload: { after: null } },
    kinds: { default: pendingKind, 'batch-delete': batchDelete },
  };
}
