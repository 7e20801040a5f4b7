import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logger, metrics } from '../../runtime/observability';
import type { StepOutcome, StepResult } from './engine';

/** One count per outcome; the only dimension is the job, so the metric set stays bounded. */
const outcomeMetric: Record<StepOutcome, string> = {
  executed: 'OperationsExecuted',
  supplied: 'OperationsExecuted',
  failed: 'OperationsFailed',
  'dead-lettered': 'OperationsDeadLettered',
  'lease-lost': 'LeasesLost',
  busy: 'StepsBusy',
  'no-operations': 'StepsUnconfigured',
};

/** The structured log line and the EMF metrics of one step (the invocation sets the `job` dimension once). */
export function reportStep(result: StepResult): void {
  const level = result.outcome === 'dead-lettered' ? 'error' : result.outcome === 'failed' ? 'warn' : 'info';
  logger[level]('cleanup step', { ...result });
  metrics.addMetric(outcomeMetric[result.outcome], MetricUnit.Count, 1);
  if (result.fill) metrics.addMetric('Fills', MetricUnit.Count, 1);
  if (result.children > 0) metrics.addMetric('ChildrenPushed', MetricUnit.Count, result.children);
  metrics.addMetric('StepDuration', MetricUnit.Milliseconds, result.durationMs);
}
