import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { PassSummary, TargetOutcome } from '../../../lib/distributor/report';
import { powertoolsDistributorReport } from '../../../lib/distributor/service';

const target = (name: string, outcome: TargetOutcome) => ({
  target: name,
  outcome,
  created: false,
  planned: 0,
  moved: 0,
  requeued: 0,
  queues: [],
});

// infra/alarms.yml alarms on TargetsFailed and TargetsMissing of a pass (lib/distributor/service.ts).
it('a pass counts failed targets and targets skipped because they do not exist', () => {
  // Per-target figures are flushed at once as EMF on stdout; keep the test output clean.
  jest.spyOn(process.stdout, 'write').mockReturnValue(true);
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'fairway' });
  const summary = {
    owner: 'test',
    planner: 'fair',
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
  powertoolsDistributorReport({ logger: new Logger({ logLevel: 'SILENT' }), metrics }).passed(summary);
  const emitted = metrics.serializeMetrics() as unknown as Record<string, unknown>;
  expect(emitted).toMatchObject({ TargetsFailed: 1, TargetsMissing: 2 });
});
