import type { Context, ScheduledEvent } from 'aws-lambda';
import { type CleanupConfig, type EngineTuning, loadCleanupConfig } from '../../../lib/cleanup/config';
import { seededRandom } from '../../../lib/cleanup/engine/random';
import { cleanupJobNames } from '../../../lib/cleanup/jobs';
import { createStepRunner } from '../../../lib/cleanup/step-runner';
import {
  cleanupJob,
  createCleanupReport,
  databaseSettings,
  jobDatabases,
  stepSettings,
} from '../../../lib/wiring/cleanup';
import { createObservability, lambdaHandler } from '../../../lib/wiring/lambda-function';
import { Recorder, testJob, useDynamo } from '../../harness/cleanup-test-job';

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
  const config = (overrides: Record<string, string> = {}, tuning: Partial<EngineTuning> = {}): CleanupConfig =>
    loadCleanupConfig(
      {
        CLEANUP_TABLE: 'CleanupStackTable',
        NXRG_DATABASE_URL: 'postgres://nxrg.invalid/db',
        OPENXDS_DATABASE_URL: 'postgres://openxds.invalid/db',
        ...overrides,
      },
      tuning,
    );

  it('logs one structured line per step and emits EMF metrics with the job as the only dimension', async () => {
    const recorder = new Recorder();
    const job = testJob('handler-job', recorder, [[{ id: 'a', children: [{ id: 'a1' }, { id: 'a2' }] }]]);
    const observability = createObservability(job.name);
    const report = createCleanupReport(observability, job.name);
    const handler = lambdaHandler(
      observability,
      createStepRunner(job, stepSettings(config()), { doc: dynamo().doc, report, random: seededRandom(3) }),
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
    const observability = createObservability(job.name);
    const core = createStepRunner(job, stepSettings(config({ CLEANUP_DRY_RUN: 'true' }, { stepsPerInvocation: 10 })), {
      doc: dynamo().doc,
      report: createCleanupReport(observability, job.name),
      random: seededRandom(4),
    });
    const invoke = () => stdoutLines(() => lambdaHandler(observability, core)(event, context));
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

  it('keeps each job on its own metrics when two run at once in one process (npm start)', async () => {
    const handlerOf = (name: string, seed: number) => {
      const job = testJob(name, new Recorder(), [[{ id: 'x' }, { id: 'y' }]]);
      const observability = createObservability(name);
      const report = createCleanupReport(observability, name);
      return lambdaHandler(
        observability,
        createStepRunner(job, stepSettings(config()), { doc: dynamo().doc, report, random: seededRandom(seed) }),
      );
    };
    const first = handlerOf('handler-first', 5);
    const second = handlerOf('handler-second', 6);
    const lines = await stdoutLines(() => Promise.all([first(event, context), second(event, context)]));
    const emf = lines.filter((line) => line.StepDuration !== undefined);
    expect(emf.map((line) => line.job).sort()).toEqual(['handler-first', 'handler-second']);
    for (const line of emf) expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'job']]);
  });

  it.each(cleanupJobNames)('job %s is registered with its operations (lib/cleanup/jobs)', (name) => {
    const env = {
      NXRG_DOCUMENT_TYPES: 'referral',
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: '{"referral":{"retentionDays":3650}}',
    };
    const report = createCleanupReport(createObservability(name), name);
    const job = cleanupJob(name, env, jobDatabases(databaseSettings(config()), report), report);
    expect(job.name).toBe(name);
    const deleting = name === 'registry-timebased-cleanup' ? 'type-based' : 'batch-delete';
    expect(Object.keys(job.kinds)).toEqual(expect.arrayContaining([job.defaultOperation.kind, deleting]));
  });
});

describe('cleanup report: the deleted ids in the log', () => {
  it('splits a large deletion over log lines that each stay far below CloudWatch’s 256 KB event limit, every id once', async () => {
    const observability = createObservability('log-split');
    const report = createCleanupReport(observability, 'log-split');
    // A default time-based range: 10,000 UUIDs are about 390 KB of JSON on one line.
    const documentIds = Array.from(
      { length: 10_000 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const written: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      report.deleted({ job: 'log-split', operation: 'range-delete', dryRun: false, requested: 10_000, documentIds });
    } finally {
      spy.mockRestore();
    }
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => line.includes('"deleted documents"'));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(128 * 1024);
    const parsed = lines.map((line) => JSON.parse(line));
    expect(parsed.flatMap((line) => line.documentIds)).toEqual(documentIds);
    expect(parsed.every((line) => line.count === 10_000 && line.job === 'log-split')).toBe(true);
    expect(parsed.map((line) => line.part)).toEqual(parsed.map((_, i) => `${i + 1}/${parsed.length}`));
  });
});
