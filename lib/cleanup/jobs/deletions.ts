import { z } from 'zod';
import type { OperationKind } from '../engine/job-definition';
import type { JobReport } from '../report';
import { MAX_LEGACY_BATCH_IDS } from './config';

/** A batch of document ids as it travels on the stack (capped: see MAX_LEGACY_BATCH_IDS). */
export const documentIds = z.array(z.string().min(1)).min(1).max(MAX_LEGACY_BATCH_IDS);

/** Splits a list into consecutive chunks of at most `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * The `batch-delete` kind of id lists (the repository job pushes ranges, and keeps this kind only to
 * run the items an earlier version left on a deployed stack): deletes the first `cap` ids of the payload with `remove`
 * (which re-checks the job's condition), reports them, and pushes the rest as a new batch delete for a
 * later step, so one step never deletes more than the cap.
 */
export function batchDeleteKind<P extends { ids: string[] }>(
  payload: z.ZodType<P>,
  options: {
    cap: number;
    report: Pick<JobReport, 'deleted'>;
    remove: (payload: P, ids: readonly string[], deletion: { at: Date; dryRun: boolean }) => Promise<readonly string[]>;
  },
): OperationKind<P> {
  const { cap, report, remove } = options;
  return {
    payload,
    async execute(batch, context) {
      const ids = batch.ids.slice(0, cap);
      const deleted = await remove(batch, ids, { at: context.now(), dryRun: context.dryRun });
      report.deleted({
        job: context.job,
        operation: 'batch-delete',
        dryRun: context.dryRun,
        requested: ids.length,
        documentIds: deleted,
      });
      return batch.ids.length > cap ? [{ kind: 'batch-delete', payload: { ...batch, ids: batch.ids.slice(cap) } }] : [];
    },
  };
}
