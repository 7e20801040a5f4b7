import type { OperationContext } from '../engine/job-definition';
import type { JobReport } from '../report';

/**
 * Runs `round` again and again from `after` (each round covers up to `size` keys and returns the
 * cursor after them, or null at the end) while the invocation's time budget (twice the slowest round
 * so far must still fit) and the per-step cap (`cap` keys covered) allow (issue 15). Returns the
 * cursor a continuation carries, or null when a round reached the end: the stack then holds a
 * cursor, never a list of ids.
 */
export async function inRounds<C>(
  context: OperationContext,
  options: { after: C | null; size: number; cap: number; round: (after: C | null) => Promise<C | null> },
): Promise<C | null> {
  const { size, cap, round } = options;
  let cursor = options.after;
  let covered = 0;
  let slowestMs = 0;
  for (;;) {
    const started = performance.now();
    const through = await round(cursor);
    if (through === null) return null;
    cursor = through;
    covered += size;
    slowestMs = Math.max(slowestMs, performance.now() - started);
    const timeLeft = context.timeLeftMs?.() ?? Infinity;
    if (covered + size > cap || timeLeft < slowestMs * 2) return cursor;
  }
}

/**
 * One round of a range delete: deletes the next keyset range after `after` with statements that
 * re-check the job's condition. `through` null: the range ran to the end of what there is to
 * delete. `requested`: what the round took before the re-check (default: the round's size).
 */
export type RangeRound<C> = (
  after: C | null,
  deletion: { at: Date; dryRun: boolean },
) => Promise<{ through: C | null; deleted: readonly string[]; requested?: number }>;

/**
 * Deletes keyset ranges of `size` documents in rounds (see {@link inRounds}) and reports each round
 * as `operation` (default `range-delete`).
 */
export function deleteRanges<C>(
  context: OperationContext,
  options: {
    after: C | null;
    size: number;
    cap: number;
    report: Pick<JobReport, 'deleted'>;
    round: RangeRound<C>;
    operation?: string;
  },
): Promise<C | null> {
  const { size, report } = options;
  return inRounds(context, {
    ...options,
    async round(after) {
      const { through, deleted, requested } = await options.round(after, { at: context.now(), dryRun: context.dryRun });
      report.deleted({
        job: context.job,
        operation: options.operation ?? 'range-delete',
        dryRun: context.dryRun,
        requested: requested ?? size,
        documentIds: deleted,
      });
      return through;
    },
  });
}
