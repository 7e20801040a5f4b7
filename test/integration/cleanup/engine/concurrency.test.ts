import { seededRandom } from '../../../../lib/cleanup/engine/random';
import { createCleanupOperator } from '../../../../lib/cleanup/operator';
import { engineFor, leafIds, Recorder, type TreeNode, testJob, useDynamo } from '../../../harness/cleanup-test-job';

const TABLE = 'CleanupStackTable';
const STEPPERS = 8;

const suppliers = (cycle: string, count: number, width: number): TreeNode[] =>
  Array.from({ length: count }, (_, s) => ({
    id: `${cycle}s${s}`,
    children: Array.from({ length: width }, (_, l) => ({ id: `${cycle}s${s}l${l}` })),
  }));

describe('cleanup engine under 8 concurrent steppers', () => {
  const dynamo = useDynamo();

  it('runs 1,000 operations: each once, never two at a time, one fill per emptying, empty at the end', async () => {
    // Two emptyings: 9 suppliers of 100 leaves, then 1 supplier of 90; with the suppliers, 1,000 operations.
    // Eight steppers contend on every one of them: more operations only make the run longer.
    const cycles = [suppliers('a', 9, 100), suppliers('b', 1, 90)];
    const recorder = new Recorder();
    const job = testJob('concurrent-job', recorder, cycles);
    const outcomes: Record<string, number> = {};

    await Promise.all(
      Array.from({ length: STEPPERS }, async (_, stepper) => {
        const engine = engineFor(job, { doc: dynamo().doc, table: TABLE, random: seededRandom(stepper) });
        while (recorder.fills.length < cycles.length + 1) {
          const { outcome } = await engine.step();
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          if (outcome === 'busy') await new Promise((resolve) => setTimeout(resolve, 2));
        }
      }),
    );

    // Every operation ran, each exactly once, and no two executions of one operation overlapped in time.
    const expected = cycles.map(leafIds);
    expect(recorder.leaves.map((run) => run.id).sort()).toEqual(expected.flat().sort());
    const overlapping = expected.flat().filter((id) =>
      recorder
        .runsOf(id)
        .sort((a, b) => a.start - b.start)
        .some((run, i, runs) => i > 0 && run.start < runs[i - 1]!.end),
    );
    expect(overlapping).toEqual([]);
    expect(new Set(recorder.suppliers).size).toBe(recorder.suppliers.length);
    expect(recorder.suppliers).toHaveLength(10);
    expect(Object.keys(outcomes).filter((outcome) => !['busy', 'executed', 'supplied'].includes(outcome))).toEqual([]);

    // The default operation ran once per emptying: fill i+1 started only after every leaf of cycle i ended.
    for (const [cycle, ids] of expected.entries()) {
      const lastEnd = Math.max(...recorder.leaves.filter((run) => ids.includes(run.id)).map((run) => run.end));
      const firstStart = Math.min(...recorder.leaves.filter((run) => ids.includes(run.id)).map((run) => run.start));
      expect(recorder.fills.filter((start) => start < lastEnd)).toHaveLength(cycle + 1);
      expect(recorder.fills[cycle]!).toBeLessThan(firstStart);
      expect(recorder.fills[cycle + 1]!).toBeGreaterThan(lastEnd);
    }
    const stack = await createCleanupOperator(dynamo().doc, TABLE).stack(job.name);
    expect(stack.size).toBe(0);
    console.info(
      `8 steppers, ${recorder.leaves.length + recorder.suppliers.length} operations: ${JSON.stringify(outcomes)}`,
    );
  }, 600_000); // 72 s one file at a time, 79 s beside other files and two CPU hogs; the limit only stops a hung run
});
