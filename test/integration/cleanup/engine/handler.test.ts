import type { Context, ScheduledEvent } from 'aws-lambda';
import { seededRandom } from '../../../../lib/cleanup/engine/random';
import { createCleanupHandler } from '../../../../lib/cleanup/handler';
import { cleanupJob, cleanupJobNames, jobDatabases } from '../../../../lib/cleanup/jobs';
import { type CleanupConfig, loadCleanupConfig } from '../../../../lib/config/cleanup';
import { lambdaHandler } from '../../../../lib/runtime/lambda';
import { logger, metrics } from '../../../../lib/runtime/observability';
import { Recorder, testJob, useDynamo } from './testJob';

const context = {
  functionName: 'cleanup',
  awsRequestId: 'req-1',
  getRemainingTimeInMillis: () => 60_000,
} as unknown as Context;
const event = {} as ScheduledEvent;

/** Runs `invoke` and returns the JSON lines it wrote to stdout (Powertools logs and EMF metrics). */
async function stdoutLines(invoke: () => Promise<unknown>): Promise<Record<string, any>[]> {
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await invoke();
  } finally {
    spy.mockRestore();
  }
  return written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

describe('cleanup function core (middy + Powertools, dynalite)', () => {
  const dynamo = useDynamo();
  const config = (overrides: Record<string, string> = {}): CleanupConfig =>
    loadCleanupConfig({
      CLEANUP_TABLE: 'CleanupStackTable',
      NXRG_DATABASE_URL: 'postgres://nxrg.invalid/db',
      OPENXDS_DATABASE_URL: 'postgres://openxds.invalid/db',
      ...overrides,
    });

  it('logs one structured line per step and emits EMF metrics with the job as the only dimension', async () => {
    const recorder = new Recorder();
    const job = testJob('handler-job', recorder, [[{ id: 'a', children: [{ id: 'a1' }, { id: 'a2' }] }]]);
    const handler = lambdaHandler(
      { logger, metrics },
      createCleanupHandler(job, config(), { doc: dynamo().doc, random: seededRandom(3) }),
    );

    const lines = await stdoutLines(() => handler(event, context));
    const steps = lines.filter((line) => line.message === 'cleanup step');
    expect(steps).toEqual([
      expect.objectContaining({
        level: 'INFO',
        job: 'handler-job',
        outcome: 'supplied',
        kind: 'root',
        fill: true,
        children: 1,
        dryRun: false,
      }),
    ]);
    expect(typeof steps[0]!.durationMs).toBe('number');
    const emf = lines.find((line) => line._aws?.CloudWatchMetrics)!;
    expect(emf._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'job']]);
    expect(emf).toMatchObject({ job: 'handler-job', OperationsExecuted: 1, Fills: 1, ChildrenPushed: 1 });
  });

  it('takes several steps per invocation when configured, stopping after a fill', async () => {
    const recorder = new Recorder();
    const job = testJob('handler-multi', recorder, [
      [{ id: 'a', children: [{ id: 'a1' }, { id: 'a2' }] }, { id: 'b' }],
    ]);
    const core = createCleanupHandler(job, config({ CLEANUP_STEPS_PER_INVOCATION: '10', CLEANUP_DRY_RUN: 'true' }), {
      doc: dynamo().doc,
      random: seededRandom(4),
    });
    const invoke = () => stdoutLines(() => lambdaHandler({ logger, metrics }, core)(event, context));
    const first = (await invoke()).filter((line) => line.message === 'cleanup step');
    expect(first.map((line) => line.fill)).toEqual([true]);
    const second = (await invoke()).filter((line) => line.message === 'cleanup step');
    // a, a1, a2, b, then the next fill (which finds nothing to supply) ends the invocation.
    expect(second.map((line) => line.outcome)).toEqual(['supplied', 'executed', 'executed', 'executed', 'executed']);
    expect(second.at(-1)).toMatchObject({ fill: true, children: 0 });
    expect(recorder.leaves.map((run) => [run.id, run.dryRun]).sort()).toEqual([
      ['a1', true],
      ['a2', true],
      ['b', true],
    ]);
  });

  it.each(cleanupJobNames)('job %s is registered with its operations (lib/cleanup/jobs)', (name) => {
    const env = {
      NXRG_DOCUMENT_TYPES: 'referral',
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: '{"referral":{"retentionDays":3650}}',
    };
    const job = cleanupJob(name, env, jobDatabases(config()));
    expect(job.name).toBe(name);
    expect(Object.keys(job.kinds)).toEqual(expect.arrayContaining([job.defaultOperation.kind, 'batch-delete']));
  });
});
