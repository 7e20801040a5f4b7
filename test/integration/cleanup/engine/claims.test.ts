import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { StepResult } from '../../../../lib/cleanup/engine/engine';
import type { JobDefinition } from '../../../../lib/cleanup/engine/job-definition';
import { seededRandom } from '../../../../lib/cleanup/engine/random';
import type { DocumentPort } from '../../../../lib/cleanup/engine/stack-store';
import { createCleanupOperator } from '../../../../lib/cleanup/operator';
import { engineFor, Recorder, testJob, testSettings, useDynamo } from '../../../harness/cleanup-test-job';

const TABLE = 'CleanupStackTable';

/** Thrown by a wrapped port: the invocation dies there, as a Lambda killed mid-step would. */
class Crash extends Error {}

/** Focused tests of who may claim an operation, each a few steps on dynalite. */
describe('cleanup engine claims', () => {
  const dynamo = useDynamo();
  let jobs = 0;
  let now = Date.now();
  const clock = () => now;
  const adapters = (doc: DocumentPort = dynamo().doc) => ({ doc, table: TABLE, random: seededRandom(7), clock });
  const operator = () => createCleanupOperator(dynamo().doc, TABLE);
  const expireLeases = () => {
    now += testSettings.leaseMs + 1;
  };

  /** `job` with its `node` operation replaced by one that counts its runs and never returns (a step that hangs). */
  function hanging(job: JobDefinition) {
    const runs: number[] = [];
    let ran: () => void = () => undefined;
    const stalled: JobDefinition = {
      ...job,
      kinds: {
        ...job.kinds,
        node: {
          ...job.kinds.node!,
          execute: () => {
            runs.push(now);
            ran();
            return new Promise<undefined>(() => {});
          },
        },
      },
    };
    /** One invocation's step: 'ran' once it started the operation (and hangs there), else what the step returned. */
    const step = (): Promise<StepResult | 'ran'> =>
      Promise.race([
        new Promise<'ran'>((resolve) => {
          ran = () => resolve('ran');
        }),
        engineFor(stalled, adapters()).step(),
      ]);
    return { runs, step };
  }

  it('dead-letters an operation whose step keeps dying after exactly maxAttempts claims, without running it again', async () => {
    const job = testJob(`claims-${++jobs}`, new Recorder(), [[{ id: 'hangs' }]]);
    expect(await engineFor(job, adapters()).step()).toMatchObject({ outcome: 'supplied', fill: true });
    const { runs, step } = hanging(job);

    // Each claim runs the operation, which hangs past its lease; the next invocation takes it over.
    for (let claim = 1; claim <= testSettings.maxAttempts; claim++) {
      expect(await step()).toBe('ran');
      expireLeases();
    }
    expect(runs).toHaveLength(testSettings.maxAttempts);

    const result = await step();
    expect(result).toMatchObject({
      outcome: 'dead-lettered',
      kind: 'node',
      attempts: testSettings.maxAttempts + 1,
      error: `claimed ${testSettings.maxAttempts} times without finishing (a step crashed or timed out)`,
    });
    expect(runs).toHaveLength(testSettings.maxAttempts);
    expect(await operator().deadLetters(job.name)).toEqual([
      expect.objectContaining({ kind: 'node', payload: { id: 'hangs' } }),
    ]);
    expect((await operator().stack(job.name)).size).toBe(0);
  });

  it('of two steppers claiming one operation at the same moment, exactly one wins and runs it', async () => {
    const recorder = new Recorder();
    const job = testJob(`claims-${++jobs}`, recorder, [[{ id: 'contended' }]]);
    expect(await engineFor(job, adapters()).step()).toMatchObject({ outcome: 'supplied', fill: true });

    // Both steppers have read the stack and hold their claim requests until both are on their way.
    let release: () => void = () => undefined;
    const bothClaiming = new Promise<void>((resolve) => {
      release = resolve;
    });
    let claims = 0;
    const port: DocumentPort = {
      send: (async (command: Parameters<DocumentPort['send']>[0]) => {
        if (command instanceof UpdateCommand && command.input.UpdateExpression?.includes('ADD attempts')) {
          if (++claims === 2) release();
          await bothClaiming;
        }
        return dynamo().doc.send(command);
      }) as DocumentPort['send'],
    };

    const results = await Promise.all([engineFor(job, adapters(port)).step(), engineFor(job, adapters(port)).step()]);
    expect(claims).toBe(2);
    expect(results.map((r) => r.outcome).sort()).toEqual(['busy', 'executed']);
    expect(recorder.leaves.map((run) => run.id)).toEqual(['contended']);
  });

  it('does not claim a child while its parent is on the stack, and runs it once the parent is off', async () => {
    const recorder = new Recorder();
    const job = testJob(`claims-${++jobs}`, recorder, [[{ id: 'parent', children: [{ id: 'c1' }, { id: 'c2' }] }]]);
    expect(await engineFor(job, adapters()).step()).toMatchObject({ outcome: 'supplied', fill: true });

    // The parent's step pushes its children, then dies before taking the parent off the stack.
    const dies: DocumentPort = {
      send: (async (command: Parameters<DocumentPort['send']>[0]) => {
        if (command instanceof DeleteCommand) throw new Crash('killed before the parent was taken off');
        return dynamo().doc.send(command);
      }) as DocumentPort['send'],
    };
    await expect(engineFor(job, adapters(dies)).step()).rejects.toThrow(Crash);
    expect(recorder.suppliers).toEqual(['parent']);
    const stack = await operator().stack(job.name);
    expect(stack).toMatchObject({ size: 3, claimed: 1 });

    // The children are on top, unclaimed, but their parent still holds its lease: nothing may run.
    const engine = engineFor(job, adapters());
    expect(await engine.step()).toMatchObject({ outcome: 'busy' });
    expect(recorder.leaves).toEqual([]);

    // Once the parent's lease expired, the parent is taken over first (pushing the same children again), then the children run.
    expireLeases();
    expect(await engine.step()).toMatchObject({ kind: 'node', outcome: 'supplied', attempts: 2, children: 2 });
    expect(recorder.suppliers).toEqual(['parent', 'parent']);
    expect(await engine.step()).toMatchObject({ outcome: 'executed' });
    expect(await engine.step()).toMatchObject({ outcome: 'executed' });
    expect(recorder.leaves.map((run) => run.id).sort()).toEqual(['c1', 'c2']);
    expect((await operator().stack(job.name)).size).toBe(0);
  });
});
