import { z } from 'zod';
import type { JobDefinition, Operation, OperationKind } from '../engine/job-definition';
import type { DeceasedCursor, DeceasedDocuments } from '../nxrg/status90';
import type { JobReport } from '../report';
import type { Status90JobConfig } from './config';
import { batchDeleteKind, chunk, documentIds } from './deletions';
import { deleteRanges } from './range-rounds';

export const STATUS90_JOB = 'registry-status90-cleanup';

const digit = z.string().regex(/^[0-9]$/);
const cpr = z.string().min(1);
const suffixPayload = z.object({ digit, after: cpr.nullable() });
/** A position in a citizen batch's (citizen CPR, document id) order; `id` null: past all of the citizen's documents. */
const documentCursor = z.object({ citizen: cpr, id: z.string().min(1).nullable() });
/**
 * A citizen batch is a key range of CPR numbers (after, through], not a list: the stack then holds
 * two CPR numbers per batch instead of hundreds. `documentsAfter` is the cursor of a batch whose
 * deceased citizens' documents took more than one step.
 */
const citizenBatchPayload = z.object({
  digit,
  after: cpr.nullable(),
  through: cpr,
  documentsAfter: z
    .union([
      documentCursor,
      // Upgrade only: an earlier version's cursor, a document id in id order across the batch, which
      // says nothing in (citizen, id) order. The batch restarts from its start: its deletes are
      // idempotent and re-check status 90, so that only walks again what is left.
      z
        .string()
        .min(1)
        .transform(() => null),
    ])
    .nullable(),
});
/**
 * Upgrade only: `batch-delete` id lists (up to a batch of ids, ~40 KB items) that an earlier version
 * pushed may still wait on a deployed stack, so the kind still runs them; this job no longer pushes any.
 */
const legacyBatchDeletePayload = z.object({ ids: documentIds });

type CitizenBatch = z.infer<typeof citizenBatchPayload>;

export interface Status90JobDeps {
  config: Pick<Status90JobConfig, 'suffixPageSize' | 'citizenBatchSize' | 'batchSize' | 'maxDeletesPerStep'>;
  registry: Pick<DeceasedDocuments, 'citizenPage' | 'deceasedRangeEnd' | 'deleteDeceasedRange' | 'deleteOfDeceased'>;
  report: Pick<JobReport, 'deleted'>;
}

/**
 * registry-status90-cleanup (SPEC §4): default → a suffix operation per digit 0–9 → citizen batches,
 * each of which deletes the documents of the deceased among its citizens itself, in keyset ranges
 * of `batchSize` in (citizen, document id) order (issue 15): each range's end is found by an index
 * walk from the cursor, and the range is deleted by one statement that re-checks status 90 at
 * delete time. It keeps going while the invocation's time budget and the per-step cap allow, then
 * pushes a continuation carrying the cursor.
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
    async execute(batch, context) {
      const next = await deleteRanges<DeceasedCursor>(context, {
        after: batch.documentsAfter,
        size: config.batchSize,
        cap: config.maxDeletesPerStep,
        report,
        async round(after, deletion) {
          const through = await registry.deceasedRangeEnd(batch, after, config.batchSize);
          const range = { after, through };
          const deleted = await registry.deleteDeceasedRange(batch, range, { reason: STATUS90_JOB, ...deletion });
          return { through, deleted };
        },
      });
      return next === null ? [] : [citizenBatch({ ...batch, documentsAfter: next })];
    },
  };

  const legacyBatchDelete = batchDeleteKind(legacyBatchDeletePayload, {
    cap: config.maxDeletesPerStep,
    report,
    remove: (_batch, ids, deletion) => registry.deleteOfDeceased(ids, { reason: STATUS90_JOB, ...deletion }),
  });

  return {
    name: STATUS90_JOB,
    defaultOperation: { kind: 'default', payload: {} },
    kinds: {
      default: defaultKind,
      suffix: suffixKind,
      'citizen-batch': citizenBatchKind,
      'batch-delete': legacyBatchDelete,
    },
  };
}

const suffix = (payload: z.infer<typeof suffixPayload>): Operation => ({ kind: 'suffix', payload });
const citizenBatch = (payload: CitizenBatch): Operation => ({ kind: 'citizen-batch', payload });
