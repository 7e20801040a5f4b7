import { seededRandom } from '../../../lib/cleanup/engine/random';
import { createCleanupOperator } from '../../../lib/cleanup/operator';
import { engineFor, Recorder, stepUntil, testJob, useDynamo } from '../../harness/cleanup-test-job';

const TABLE = 'CleanupStackTable';

describe('cleanup operator interface (dynalite)', () => {
  const dynamo = useDynamo();

  it('shows a stack: its size, its top operations, counts by kind and the last fill', async () => {
    const recorder = new Recorder();
    const job = testJob('operator-stack', recorder, [[{ id: 'a' }, { id: 'b' }, { id: 'p', poison: true }]]);
    await engineFor(job, { doc: dynamo().doc, table: TABLE, random: seededRandom(1) }).step();

    const stack = await createCleanupOperator(dynamo().doc, TABLE).stack(job.name, 2);
    expect(stack).toMatchObject({ job: job.name, size: 3, claimed: 0, byKind: { node: 2, poison: 1 } });
    expect(stack.lastFill).toEqual({ generation: 1, done: true, filledAt: expect.any(String) });
    expect(stack.top).toHaveLength(2);
    expect(stack.top[0]).toEqual({
      sk: expect.stringMatching(/^op#/),
      kind: expect.any(String),
      attempts: 0,
      payload: expect.any(Object),
    });
    expect(stack.top[0]!.sk > stack.top[1]!.sk).toBe(true);
  });

  it('lists dead letters, requeues one with its attempts reset, and drops another', async () => {
    const recorder = new Recorder();
    const job = testJob('operator-dead', recorder, [
      [{ id: 'p1', poison: true }, { id: 'p2', poison: true }, { id: 'ok' }],
    ]);
    const engine = engineFor(job, { doc: dynamo().doc, table: TABLE, random: seededRandom(2) }, { maxAttempts: 1 });
    await stepUntil(engine, () => recorder.fills.length === 2);
    const operator = createCleanupOperator(dynamo().doc, TABLE);

    const dead = await operator.deadLetters(job.name);
    expect(dead.map((d) => [d.kind, d.payload, d.attempts, d.error]).sort()).toEqual([
      ['poison', { id: 'p1' }, 1, 'Error: poison p1 always fails'],
      ['poison', { id: 'p2' }, 1, 'Error: poison p2 always fails'],
    ]);
    const [first, second] = dead;

    const requeued = await operator.requeue(job.name, first!.sk);
    const stack = await operator.stack(job.name);
    expect(stack).toMatchObject({
      size: 1,
      byKind: { poison: 1 },
      top: [{ sk: requeued.sk, attempts: 0, payload: first!.payload }],
    });
    await operator.drop(job.name, second!.sk);
    expect(await operator.deadLetters(job.name)).toEqual([]);

    // The requeued operation runs again (and, still poisonous, comes back with a fresh error).
    const result = await engine.step();
    expect(result).toMatchObject({ sk: requeued.sk, outcome: 'dead-lettered', attempts: 1 });
    expect(await operator.deadLetters(job.name)).toEqual([
      expect.objectContaining({ sk: requeued.sk, payload: first!.payload }),
    ]);
  });

  it('names the operation when asked to requeue or drop one that is not dead-lettered', async () => {
    const operator = createCleanupOperator(dynamo().doc, TABLE);
    await expect(operator.requeue('operator-none', 'op#1')).rejects.toThrow(
      'job operator-none has no dead-lettered operation op#1',
    );
    await expect(operator.drop('operator-none', 'op#1')).rejects.toThrow(
      'job operator-none has no dead-lettered operation op#1',
    );
  });
});
