import { z } from 'zod';
import type { Status90JobConfig } from '../../config/cleanup-jobs';
import type { NxrgRegistry } from '../../nxrg/registry';
import type { JobDefinition, Operation, OperationKind } from '../engine/job-definition';
import type { JobReport } from '../report';
import { batchDeleteKind, chunk, documentIds } from './deletions';

export const STATUS90_JOB = 'registry-status90-cleanup';

const digit = z.string().regex(/^[0-9]$/);
const cpr = z.string().min(1);
const suffixPayload = z.object({ digit, after: cpr.nullable() });
/**
 * A citizen batch is a key range of CPR numbers (after, through], not a list: the stack then holds
 * two CPR numbers per batch instead of hundreds. `documentsAfter` pages through the documents of a
 * batch whose deceased citizens have more than one batch delete's worth.
 */
const citizenBatchPayload = z.object({
  digit,
  after: cpr.nullable(),
  through: cpr,
  documentsAfter: z.string().min(1).nullable(),
});
const batchDeletePayload = z.object({ ids: documentIds });

type CitizenBatch = z.infer<typeof citizenBatchPayload>;

export interface Status90JobDeps {
  config: Pick<Status90JobConfig, 'suffixPageSize' | 'citizenBatchSize' | 'batchSize' | 'maxDeletesPerStep'>;
  registry: Pick<NxrgRegistry, 'citizenPage' | 'deceasedDocumentPage' | 'deleteOfDeceased'>;
  report: Pick<JobReport, 'deleted'>;
}

/**
 * registry-status90-cleanup (SPEC §4): default → a suffix operation per digit 0–9 → citizen batches
 * → the documents of the deceased among them → batch deletes that re-check status 90 at delete time.
 */
export function status90Job({ config, registry, report }: Status90JobDeps): JobDefinition {
  const defaultKind: OperationKind<Record<string, never>> = {
    payload: z.object({}).strict() as z.ZodType<Record<string, never>>,
    async execute() {
      return Array.from({ length: 10 }, (_, d) => suffix({ digit: String(d), after: null }));
    },
  };

  const suffixKind: OperationKind<z.infer<typeof suffixPayload>> = {
    payload: suffixPayload,
    async execute({ digit, after }) {
      const cprs = await registry.citizenPage(digit, after, config.suffixPageSize);
      let from = after;
      const children: Operation[] = chunk(cprs, config.citizenBatchSize).map((batch) => {
        const through = batch[batch.length - 1]!;
        const op = citizenBatch({ digit, after: from, through, documentsAfter: null });
        from = through;
        return op;
      });
      if (cprs.length === config.suffixPageSize) children.push(suffix({ digit, after: from }));
      return children;
    },
  };

  const citizenBatchKind: OperationKind<CitizenBatch> = {
    payload: citizenBatchPayload,
    async execute(batch) {
      const ids = await registry.deceasedDocumentPage(batch, batch.documentsAfter, config.batchSize);
      if (ids.length === 0) return [];
      const children: Operation[] = [{ kind: 'batch-delete', payload: { ids } }];
      if (ids.length === config.batchSize)
        children.push(citizenBatch({ ...batch, documentsAfter: ids[ids.length - 1]! }));
      return children;
    },
  };

  const batchDelete = batchDeleteKind(batchDeletePayload, {
    cap: config.maxDeletesPerStep,
    report,
    remove: (_batch, ids, deletion) => registry.deleteOfDeceased(ids, { reason: STATUS90_JOB, ...deletion }),
  });

  return {
    name: STATUS90_JOB,
    defaultOperation: { kind: 'default', payload: {} },
    kinds: { default: defaultKind, suffix: suffixKind, 'citizen-batch': citizenBatchKind, 'batch-delete': batchDelete },
  };
}

const suffix = (payload: z.infer<typeof suffixPayload>): Operation => ({ kind: 'suffix', payload });
const citizenBatch = (payload: CitizenBatch): Operation => ({ kind: 'citizen-batch', payload });
