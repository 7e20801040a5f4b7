import type { OperationContext } from '../engine/job-definition';
import type { JobReport } from '../report';

/**
 * One round of a range delete: finds the end of the next keyset range after `after` and deletes
 * the range with a statement that re-checks the job's condition. `through` null: the range ran to
 * the end of what there is to delete.
 */
export type RangeRound<C> = (
  after: C | null,
  deletion: { at: Date; dryRun: boolean },
) => Promise<{ through: C | null; deleted: readonly string[] }>;

/**
 * Deletes keyset ranges of `size` documents, round after round from `after`, while the invocation's
 * time budget (twice the slowest round so far must still fit) and the per-step cap (`cap` documents
 * covered) allow (issue 15). Reports each round. Returns the cursor a continuation carries, or null
 * when the last range ran to the end. The stack then holds a cursor, never a list of ids.
 */
export async function deleteRanges<C>(
  context: OperationContext,
  options: { after: C | null; size: number; cap: number; report: Pick<JobReport, 'deleted'>; round: RangeRound<C> },
): Promise<C | null> {
  const { size, cap, report, round } = options;
  let cursor = options.after;
  let covered = 0;
  let slowestMs = 0;
  for (;;) {
    const started = performance.now();
    const { through, deleted } = await round(cursor, { at: context.now(), dryRun: context.dryRun });
    report.deleted({
      job: context.job,
      operation: 'range-delete',
      dryRun: context.dryRun,
      requested: size,
      documentIds: deleted,
    });
    if (through === null) return null;
    cursor = through;
    covered += size;
    slowestMs = Math.max(slowestMs, performance.now() - started);
    const timeLeft = context.timeLeftMs?.() ?? Infinity;
    if (covered + size > cap || timeLeft < slowestMs * 2) return cursor;
  }
}
