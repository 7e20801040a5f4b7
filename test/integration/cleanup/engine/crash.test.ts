import { seededRandom } from '../../../../lib/cleanup/engine/random';
import type { DocumentPort } from '../../../../lib/cleanup/engine/stack-store';
import { createCleanupOperator } from '../../../../lib/cleanup/operator';
import {
  engineFor,
  leafIds,
  Recorder,
  stepUntil,
  type TreeNode,
  testJob,
  testSettings,
  useDynamo,
} from '../../../harness/cleanup-test-job';

const TABLE = 'CleanupStackTable';
const CRASH_RUNS_TIMEOUT_MS = 600_000;

/** Thrown by the injected port: the invocation dies there, as a Lambda killed mid-step would. */
class Crash extends Error {}

/** Counts DynamoDB calls and crashes at call `at`, before it reaches DynamoDB or after it took effect. */
function crashingPort(doc: DocumentPort, at: number, when: 'before' | 'after') {
  const port = {
    calls: 0,
    send: (async (command: Parameters<DocumentPort['send']>[0]) => {
      port.calls++;
      if (port.calls === at && when === 'before') throw new Crash(`crash before call ${at}`);
      const output = await doc.send(command);
      if (port.calls === at && when === 'after') throw new Crash(`crash after call ${at}`);
      return output;
    }) as DocumentPort['send'],
  };
  return port;
}

// Suppliers at two levels, a leaf beside them, and pushes split into batches of 2.
const tree: TreeNode[] = [
  { id: 's1', children: [{ id: 's1a' }, { id: 's1b' }, { id: 's1c' }] },
  { id: 's2', children: [{ id: 's3', children: [{ id: 's3a' }, { id: 's3b' }] }] },
  { id: 'l0' },
];
const leaves = leafIds(tree);

describe('cleanup engine crashing at every DynamoDB call of a run', () => {
  const dynamo = useDynamo();
  let jobs = 0;

  /** Runs the job until its stack emptied once: every leaf ran and a later fill found nothing to supply. */
  async function runJob(port: DocumentPort, recorder: Recorder, clock: () => number) {
    // The default operation supplies the tree until all of it ran, so re-running an unfinished fill is idempotent.
    const job = testJob(`crash-job-${jobs}`, recorder, (r) =>
      leaves.every((id) => r.runsOf(id).length > 0) ? [] : tree,
    );
    const engine = engineFor(job, { doc: port, table: TABLE, random: seededRandom(jobs), clock }, { batchSize: 2 });
    const finished = () => recorder.fillsSupplying.at(-1) === 0 && leaves.every((id) => recorder.runsOf(id).length > 0);
    await stepUntil(engine, finished, 500);
    return job;
  }

  /** How many DynamoDB calls a clean run makes: each is a crash point. */
  let points = 0;
  beforeAll(async () => {
    jobs++;
    const clean = crashingPort(dynamo().doc, 0, 'before');
    await runJob(clean, new Recorder(), Date.now);
    points = clean.calls;
  }, CRASH_RUNS_TIMEOUT_MS);

  // A crash point is a few dozen DynamoDB calls and there are 40-odd points on each side: each side
  // took 4.5 minutes on a 2-core machine at load 20, so each is its own test with a 10-minute bound.
  it.each(['before', 'after'] as const)(
    'recovers from a crash %s any DynamoDB call: every leaf runs, none is lost, no child is duplicated',
    async (when) => {
      expect(points).toBeGreaterThan(40);
      const failures: string[] = [];
      for (let at = 1; at <= points; at++) {
        jobs++;
        const recorder = new Recorder();
        const start = Date.now();
        const crashed = await runJob(crashingPort(dynamo().doc, at, when), recorder, () => start).then(
          () => false,
          (error: unknown) => {
            if (!(error instanceof Crash)) throw error;
            return true;
          },
        );
        if (!crashed) continue;
        // A fresh invocation, after the crashed one's leases expired, runs the job to the end.
        const job = await runJob(dynamo().doc, recorder, () => start + testSettings.leaseMs + 1);

        const runs = leaves.map((id) => recorder.runsOf(id).length);
        const twice = runs.filter((n) => n === 2).length;
        const operator = createCleanupOperator(dynamo().doc, TABLE);
        const [stack, dead] = await Promise.all([operator.stack(job.name), operator.deadLetters(job.name)]);
        // Only the leaf whose own step crashed after it ran may run again; a duplicated child would run twice with all its siblings.
        const ok = runs.every((n) => n === 1 || n === 2) && twice <= 1 && stack.size === 0 && dead.length === 0;
        if (!ok)
          failures.push(`${when} call ${at}: runs ${JSON.stringify(runs)}, stack ${stack.size}, dead ${dead.length}`);
      }
      expect(failures).toEqual([]);
    },
    CRASH_RUNS_TIMEOUT_MS,
  );
});
