import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { PassSummary, TargetOutcome } from '../../../lib/distributor/report';
import { noisyTenants } from '../../../lib/distributor/waits';
import { powertoolsDistributorReport } from '../../../lib/wiring/distributor-report';

const target = (name: string, outcome: TargetOutcome) => ({
  target: name,
  outcome,
  created: false,
  planned: 0,
  moved: 0,
  requeued: 0,
  queues: [],
});

// infra/alarms.yml alarms on TargetsFailed and TargetsMissing of a pass (lib/wiring/distributor.ts).
it('a pass counts failed targets and targets skipped because they do not exist', () => {
  // Per-target figures are flushed at once as EMF on stdout; keep the test output clean.
  jest.spyOn(process.stdout, 'write').mockReturnValue(true);
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'fairway' });
  const summary = {
    owner: 'test',
    planner: 'tenant',
    durationMs: 1,
    moved: 0,
    requeued: 0,
    parked: 0,
    targets: [
      target('a', 'failed'),
      target('b', 'target-missing'),
      target('c', 'target-missing'),
      target('d', 'distributed'),
    ],
  } as unknown as PassSummary;
  powertoolsDistributorReport({ logger: new Logger({ logLevel: 'SILENT' }), metrics }, { alarmSeconds: 60 }).passed(
    summary,
  );
  const emitted = metrics.serializeMetrics() as unknown as Record<string, unknown>;
  expect(emitted).toMatchObject({ TargetsFailed: 1, TargetsMissing: 2 });
});

describe('staging waits (issue 25, item 3)', () => {
  const wait = (p50Ms: number, maxMs: number) => ({ measured: 2, p50Ms, p99Ms: maxMs, maxMs });
  /** Runs one pass through the report and returns the EMF and log lines it wrote, parsed. */
  const pass = (targets: unknown[]) => {
    const written: Record<string, any>[] = [];
    const capture = (chunk: unknown) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) written.push(JSON.parse(line));
      return true;
    };
    jest.spyOn(process.stdout, 'write').mockImplementation(capture);
    jest.spyOn(process.stderr, 'write').mockImplementation(capture);
    const metrics = new Metrics({ namespace: 'Test', serviceName: 'fairway' });
    const summary = { owner: 'o', planner: 'tenant', durationMs: 1, moved: 0, requeued: 0, parked: 0, targets };
    powertoolsDistributorReport(
      { logger: new Logger({ serviceName: 'fairway' }), metrics },
      { alarmSeconds: 60 },
    ).passed(summary as unknown as PassSummary);
    const totals = metrics.serializeMetrics() as unknown as Record<string, unknown>;
    jest.restoreAllMocks();
    return { written, totals };
  };
  const measured = {
    ...target('w', 'distributed'),
    wait: { measured: 4, p50Ms: 300, p99Ms: 61_000, maxMs: 61_000 },
    queues: [
      { name: 'w»/t1/wf', wait: wait(300, 61_000) },
      { name: 'w»/t2', wait: wait(200, 500) },
      { name: 'w»/old' }, // only messages routed before the stamp: nothing measured
    ],
  };

  it('per target p50, p99 and the longest wait in ms, with the target as the only dimension', () => {
    const { written } = pass([measured]);
    const emf = (name: string) => written.find((line) => name in line && line._aws);
    for (const [name, value] of [
      ['TargetWaitP50', 300],
      ['TargetWaitP99', 61_000],
      ['TenantWaitMax', 61_000],
    ] as const) {
      const line = emf(name)!;
      expect(line[name]).toBe(value);
      expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'target']]);
      expect(line._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: name, Unit: 'Milliseconds' }]);
      expect(line.target).toBe('w');
      expect(line).not.toHaveProperty('tenant');
    }
  });

  it('a target whose moves measured nothing has no wait datapoint (not a zero wait)', () => {
    const { written } = pass([target('w', 'distributed')]);
    expect(written.some((line) => 'TenantWaitMax' in line || 'TargetWaitP50' in line)).toBe(false);
  });

  it('one log line per measured staging queue, tenant at the top level for the Contributor Insights rule', () => {
    const lines = pass([measured]).written.filter((line) => line.message === 'Staging wait');
    expect(
      lines.map(({ stagingQueue, tenant, workflow, waitMs }) => ({ stagingQueue, tenant, workflow, waitMs })),
    ).toEqual([
      { stagingQueue: 'w»/t1/wf', tenant: 't1', workflow: 'wf', waitMs: 61_000 },
      { stagingQueue: 'w»/t2', tenant: 't2', workflow: undefined, waitMs: 500 },
    ]);
  });

  it('queues whose longest wait passed the staging-wait bound (60 s) are counted (alarmed) and warned about', () => {
    const { written, totals } = pass([measured]);
    expect(totals).toMatchObject({ StagingWaitsOverBound: 1 });
    const warning = written.find((line) => line.level === 'WARN');
    expect(warning).toMatchObject({ target: 'w', queues: 1, boundSeconds: 60 });
    expect(warning!.longest).toEqual([{ stagingQueue: 'w»/t1/wf', waitMs: 61_000 }]);
    expect(pass([target('w', 'distributed')]).totals).toMatchObject({ StagingWaitsOverBound: 0 });
  });
});

describe('who is noisy, named (issue 37, item 4)', () => {
  const wait = (maxMs: number) => ({ measured: 1, p50Ms: maxMs, p99Ms: maxMs, maxMs });

  it('a target names its five tenants with most staged over all their workflows, and the five that waited longest', () => {
    const staging = [
      ...Array.from({ length: 5 }, (_, i) => ({ name: `w»/spread/wf${i}`, depth: 30 })),
      { name: 'w»/big/wf', depth: 100 },
      ...['a', 'b', 'c', 'd', 'e'].map((t, i) => ({ name: `w»/${t}/wf`, depth: 10 - i })),
      { name: 'w»/empty/wf', depth: 0 },
    ];
    const moved = [
      { name: 'w»/spread/wf0', wait: wait(900) },
      { name: 'w»/spread/wf1', wait: wait(4000) },
      { name: 'w»/big/wf', wait: wait(100) },
      { name: 'w»/a/wf' },
    ];
    expect(noisyTenants(staging, moved)).toEqual({
      byBacklog: [
        { tenant: 'spread', staged: 150 },
        { tenant: 'big', staged: 100 },
        { tenant: 'a', staged: 10 },
        { tenant: 'b', staged: 9 },
        { tenant: 'c', staged: 8 },
      ],
      byWait: [
        { tenant: 'spread', waitMs: 4000 },
        { tenant: 'big', waitMs: 100 },
      ],
    });
    expect(noisyTenants([{ name: 'w»/a/x', depth: 0 }], [])).toBeUndefined();
  });

  it('the pass logs a "Tenant backlog" line per named tenant, for the Contributor Insights rule', () => {
    const written: Record<string, any>[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) written.push(JSON.parse(line));
      return true;
    });
    const noisy = { byBacklog: [{ tenant: 'spread', staged: 150 }], byWait: [] };
    const summary = {
      owner: 'o',
      planner: 'tenant',
      durationMs: 1,
      moved: 0,
      requeued: 0,
      parked: 0,
      targets: [{ ...target('w', 'distributed'), noisy }],
    };
    powertoolsDistributorReport(
      {
        logger: new Logger({ serviceName: 'fairway' }),
        metrics: new Metrics({ namespace: 'Test', serviceName: 'fairway' }),
      },
      { alarmSeconds: 60 },
    ).passed(summary as unknown as PassSummary);
    jest.restoreAllMocks();
    const lines = written.filter((line) => line.message === 'Tenant backlog');
    expect(lines.map(({ target: t, tenant, staged }) => ({ target: t, tenant, staged }))).toEqual([
      { target: 'w', tenant: 'spread', staged: 150 },
    ]);
  });
});
