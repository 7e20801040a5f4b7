import type { Context, ScheduledEvent } from 'aws-lambda';
import { loadDistributorConfig } from '../../../lib/distributor/config';
import type { ExecutionSummary } from '../../../lib/distributor/report';
import type { Env } from '../../../lib/platform/config';
import { distributorFunction } from '../../../lib/wiring/distributor';
import { lambdaFunction } from '../../../lib/wiring/lambda-function';
import { type DistributorFixture, distributorFixture } from './fixture';

type Handler = (event: ScheduledEvent, context: Context) => Promise<ExecutionSummary>;

describe('functions/distributor (the Lambda, in process)', () => {
  let f: DistributorFixture;
  let handler: Handler & { close(): Promise<void> };
  const saved = process.env;
  beforeAll(async () => {
    f = await distributorFixture();
    // The SDK reads credentials when it first calls DynamoDB, so the environment stays until the end.
    process.env = { ...saved, ...f.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' };
    // functions/distributor.ts's handler, but for an execution that ends after its round rather than
    // wait for the target's next due time (a fixed value, shortened here and never by the environment).
    const definition = { ...distributorFunction, load: (env: Env) => loadDistributorConfig(env, { waitBoundMs: 0 }) };
    handler = lambdaFunction(definition) as unknown as typeof handler;
  });
  afterAll(async () => {
    process.env = saved;
    await handler?.close();
    await f?.close();
  });

  it('runs the backstop and one pass, logs one structured summary each and emits EMF metrics per target', async () => {
    await f.stage('lambda-target', { 'x-max-length': 30 }, { 'lambda-target»/t1': 50 });

    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const context = {
      functionName: 'distributor',
      awsRequestId: 'req-1',
      getRemainingTimeInMillis: () => 60_000,
    } as unknown as Context;
    let summary: ExecutionSummary;
    try {
      summary = await handler({} as ScheduledEvent, context);
    } finally {
      write.mockRestore();
    }

    expect(summary).toMatchObject({ rounds: 1, moved: 30, ending: 'idle' });
    expect(await f.depth('lambda-target')).toBe(30);
    const records = lines
      .flatMap((l) => l.split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
    const logged = records.filter((r) => r.message === 'Distribution pass');
    expect(logged).toHaveLength(1);
    expect(records.filter((r) => r.message === 'Backstop listing of the vhost')).toEqual([
      expect.objectContaining({ queues: 2, recorded: 0, wanted: 1 }),
    ]);
    expect(records.filter((r) => r.message === 'Distributor execution')).toEqual([
      expect.objectContaining({ execution: expect.objectContaining({ slot: 0, rounds: 1, moved: 30 }) }),
    ]);
    expect(logged[0]!.pass.targets).toEqual([
      expect.objectContaining({
        target: 'lambda-target',
        capacity: 30,
        planned: 30,
        moved: 30,
        queues: [expect.objectContaining({ name: 'lambda-target»/t1', planned: 30, moved: 30 })],
      }),
    ]);
    const emf = records.filter((r) => r._aws?.CloudWatchMetrics);
    const perTarget = emf.filter((r) => r.target === 'lambda-target');
    expect(perTarget.map((r) => r.TargetMoved).filter((v) => v !== undefined)).toEqual([30]);
    expect(emf.some((r) => r.MessagesMoved === 30 && r.target === undefined)).toBe(true);
    // No tenant ever becomes a metric dimension.
    expect(JSON.stringify(emf.map((r) => r._aws.CloudWatchMetrics))).not.toContain('t1');
  });
});
