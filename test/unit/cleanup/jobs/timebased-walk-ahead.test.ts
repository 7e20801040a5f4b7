import type { OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { timebasedJob } from '../../../../lib/cleanup/jobs/timebased';
import type { TimeCursor } from '../../../../lib/cleanup/nxrg/tables';
import type { ExpiredRange } from '../../../../lib/cleanup/nxrg/timebased';
import { noMarks } from '../../../harness/cleanup-job-marks';

const NOW = new Date('2026-06-01T00:00:00Z');
const context: OperationContext = { job: 'test', dryRun: false, now: () => NOW, marks: noMarks };
const referral = { documentType: 'referral', retentionDays: 10, basis: 'created' as const, batchSize: 3 };
const cursorOf = (n: number): TimeCursor => ({ at: `t-${n}`, id: `doc-${n}` });
const nextTick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A registry of `expired` documents doc-1…doc-n whose statements take some ticks (a walk `walkTicks`, a
 * delete `deleteTicks`) and log their start and end, so the test sees which statements overlap.
 */
function setup(expired: number, { maxDeletesPerStep = 100, walkTicks = 3, deleteTicks = 5 } = {}) {
  const log: string[] = [];
  const rest = (after: TimeCursor | null) =>
    Array.from({ length: expired }, (_, i) => i + 1).filter((n) => after === null || n > Number(after.id.slice(4)));
  const job = timebasedJob({
    config: { documentTypes: [referral], maxDeletesPerStep },
    registry: {
      async expiredRangeEnd(_rule, after, size) {
        log.push(`walk after ${after?.id ?? 'start'}`);
        for (let i = 0; i < walkTicks; i++) await nextTick();
        const end = rest(after)[size - 1];
        log.push(`walked to ${end === undefined ? 'the end' : `doc-${end}`}`);
        return end === undefined ? null : cursorOf(end);
      },
      async deleteExpiredRange(_rule, range: ExpiredRange) {
        log.push(`delete through ${range.through?.id ?? 'the end'}`);
        for (let i = 0; i < deleteTicks; i++) await nextTick();
        log.push('deleted');
        return [];
      },
    },
    report: { deleted: () => undefined, dropped: () => undefined },
  });
  const typeBased = job.kinds['type-based']!;
  return { log, step: () => typeBased.execute({ documentType: 'referral', after: null }, context) };
}

describe('registry-timebased-cleanup walks the next range while it deletes one', () => {
  it('the end of the next range is walked while the current range is deleted, each range once', async () => {
    const { log, step } = setup(8);
    expect(await step()).toEqual([]);
    expect(log).toEqual([
      'walk after start',
      'walked to doc-3',
      'walk after doc-3',
      'delete through doc-3',
      'walked to doc-6',
      'deleted',
      'walk after doc-6',
      'delete through doc-6',
      'walked to the end',
      'deleted',
      'delete through the end',
      'deleted',
    ]);
  });

  it('a step that stops at its cap returns only once the walk ahead has ended: no statement outlives the step', async () => {
    const { log, step } = setup(20, { maxDeletesPerStep: 3, walkTicks: 8, deleteTicks: 2 });
    const next = await step();
    expect(next).toEqual([{ kind: 'type-based', payload: { documentType: 'referral', after: cursorOf(3) } }]);
    // The walk ahead outlasts the range's delete; the continuation carries the cursor, not the walked end.
    expect(log.slice(2)).toEqual(['walk after doc-3', 'delete through doc-3', 'deleted', 'walked to doc-6']);
  });
});
