import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { PassSummary } from './pass';

/**
 * One structured log line per pass (every target and staging queue) and EMF metrics: pass
 * totals without dimensions, per-target figures with a `target` dimension (targets are few;
 * tenants are not a dimension).
 */
export function reportPass(summary: PassSummary, logger: Logger, metrics: Metrics): void {
  logger.info('Distribution pass', { pass: summary });
  metrics.addMetric('MessagesMoved', MetricUnit.Count, summary.moved);
  metrics.addMetric('MessagesRequeued', MetricUnit.Count, summary.requeued);
  metrics.addMetric('PassDuration', MetricUnit.Milliseconds, summary.durationMs);
  metrics.addMetric(
    'TargetsLeasedElsewhere',
    MetricUnit.Count,
    summary.targets.filter((t) => t.outcome === 'leased-elsewhere').length,
  );
  metrics.addMetric('TargetsFailed', MetricUnit.Count, summary.targets.filter((t) => t.outcome === 'failed').length);
  metrics.addMetric(
    'TargetsMissing',
    MetricUnit.Count,
    summary.targets.filter((t) => t.outcome === 'target-missing').length,
  );
  for (const target of summary.targets) {
    if (target.outcome === 'leased-elsewhere') continue;
    // A single metric flushes at once and then forgets its dimensions: one per figure.
    const perTarget = (name: string, value: number) =>
      metrics.singleMetric().addDimension('target', target.target).addMetric(name, MetricUnit.Count, value);
    perTarget('TargetCapacity', target.capacity ?? 0);
    perTarget('TargetPlanned', target.planned);
    perTarget('TargetMoved', target.moved);
  }
}
