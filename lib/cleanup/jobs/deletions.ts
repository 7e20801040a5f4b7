import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { MAX_BATCH_SIZE } from '../../config/cleanup-jobs';
import { logger, metrics } from '../../runtime/observability';
import type { Operation, OperationContext } from '../engine/types';

/** What one batch delete deleted (or, in a dry run, would have deleted). Document ids only: never a CPR. */
export interface DeletionEvent {
  job: string;
  operation: string;
  dryRun: boolean;
  /** Ids the batch asked for, before the re-check. */
  requested: number;
  documentIds: readonly string[];
}

/** Where deletions are reported; the default writes a structured log line and a metric. */
export interface DeletionReport {
  record(event: DeletionEvent): void;
}

export const logDeletions: DeletionReport = {
  record({ job, operation, dryRun, requested, documentIds }) {
    logger.info(dryRun ? 'dry run: would delete documents' : 'deleted documents', {
      job,
      operation,
      dryRun,
      requested,
      count: documentIds.length,
      documentIds,
    });
    metrics.addMetric(dryRun ? 'DocumentsDryRunCounted' : 'DocumentsDeleted', MetricUnit.Count, documentIds.length);
  },
};

/** A batch of document ids as it travels on the stack (capped: see MAX_BATCH_SIZE). */
export const documentIds = z.array(z.string().min(1)).min(1).max(MAX_BATCH_SIZE);

/** Splits a list into consecutive chunks of at most `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Runs one batch delete within the per-step cap: deletes the first `cap` ids, reports them, and
 * returns the rest as a new operation of the same kind (built by `rest`) for a later step.
 */
export async function deleteWithinCap(options: {
  ids: readonly string[];
  cap: number;
  context: OperationContext;
  operation: string;
  report: DeletionReport;
  remove: (ids: readonly string[]) => Promise<readonly string[]>;
  rest: (ids: string[]) => Operation;
}): Promise<Operation[]> {
  const { ids, cap, context, operation, report, remove, rest } = options;
  const now = ids.slice(0, cap);
  const deleted = await remove(now);
  report.record({ job: context.job, operation, dryRun: context.dryRun, requested: now.length, documentIds: deleted });
  return ids.length > cap ? [rest(ids.slice(cap))] : [];
}
