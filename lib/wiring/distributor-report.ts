import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DistributorReport, PassSummary, TargetSummary } from '../distributor/report';
import { waitReport } from '../distributor/waits';
import { warningReport } from '../distributor/warning-report';
import type { Observability } from '../platform/runtime';

/**
 * Warnings to the function's logger; each pass as one structured log line (every target and
 * staging queue) and EMF metrics: pass totals without dimensions, per-target figures with a
 * `target` dimension (targets are few; tenants are never a dimension). Per-tenant waits go to
 * their own log lines, which a Contributor Insights rule ranks (infra/cloudwatch.yml).
 */
export function powertoolsDistributorReport(
  { logger, metrics }: Observability,
  waits: { alarmSeconds: number },
): DistributorReport {
  const report = warningReport(
    (message, details) => logger.warn(message, details),
    (summary) => reportPass({ logger, metrics }, waits, summary),
    (message, details) => logger.info(message, details),
  );
  return {
    ...report,
    // Alarmable: the pass ran on controls that may be stale (a pause an operator set may not hold).
    controlsUnreadable(error) {
      report.controlsUnreadable(error);
      metrics.addMetric('ControlsUnreadable', MetricUnit.Count, 1);
    },
    controlSkipped(key, problem) {
      report.controlSkipped(key, problem);
      metrics.addMetric('ControlEntriesSkipped', MetricUnit.Count, 1);
    },
    boardFailed(action, error) {
      report.boardFailed(action, error);
      // The router counts its failed requests under the same name (alarmed).
      metrics.addMetric('PassRequestsFailed', MetricUnit.Count, 1);
    },
    executionEnded(execution) {
      report.executionEnded(execution);
      metrics.addMetric('ExecutionWaited', MetricUnit.Milliseconds, execution.waitedMs);
    },
  };
}

/** A pass as one log line, its waits and noisy tenants as their own, and its EMF metrics. */
function reportPass({ logger, metrics }: Observability, waits: { alarmSeconds: number }, summary: PassSummary): void {
  logger.info('Distribution pass', { pass: summary });
  const { lines, overBound } = waitReport(summary.targets, waits.alarmSeconds * 1000);
  for (const line of lines) logger.info('Staging wait', { ...line });
  // Who is noisy (a bounded list per target), ranked over targets and passes by a Contributor Insights rule.
  for (const { target, noisy } of summary.targets) {
    for (const top of noisy?.byBacklog ?? []) logger.info('Tenant backlog', { target, ...top });
  }
  const overText = 'Messages waited in staging longer than the staging-wait bound';
  for (const over of overBound) logger.warn(overText, { ...over, boundSeconds: waits.alarmSeconds });
  // Alarmed (infra/cloudwatch.yml): a tenant's messages waited longer than the bound.
  const queuesOverBound = overBound.reduce((n, o) => n + o.queues, 0);
  metrics.addMetric('StagingWaitsOverBound', MetricUnit.Count, queuesOverBound);
  metrics.addMetric('MessagesMoved', MetricUnit.Count, summary.moved);
  metrics.addMetric('MessagesRequeued', MetricUnit.Count, summary.requeued);
  // Alarmed (infra/cloudwatch.yml): a parked message waits for an operator.
  metrics.addMetric('MessagesParked', MetricUnit.Count, summary.parked);
  metrics.addMetric('PassDuration', MetricUnit.Milliseconds, summary.durationMs);
  const count = (outcome: string) => summary.targets.filter((t) => t.outcome === outcome).length;
  metrics.addMetric('TargetsLeasedElsewhere', MetricUnit.Count, count('leased-elsewhere'));
  metrics.addMetric('TargetsFailed', MetricUnit.Count, count('failed'));
  metrics.addMetric('TargetsMissing', MetricUnit.Count, count('target-missing'));
  for (const target of summary.targets) if (target.outcome !== 'leased-elsewhere') reportTarget(metrics, target);
}

/** A passed target's figures, each a metric with a `target` dimension. */
function reportTarget(metrics: Observability['metrics'], target: TargetSummary): void {
  // A single metric flushes at once and then forgets its dimensions: one per figure.
  const perTarget = (name: string, value: number, unit: Parameters<typeof metrics.addMetric>[1] = MetricUnit.Count) =>
    metrics.singleMetric().addDimension('target', target.target).addMetric(name, unit, value);
  perTarget('TargetCapacity', target.capacity ?? 0);
  perTarget('TargetPlanned', target.planned);
  perTarget('TargetMoved', target.moved);
  // Only for a pass that measured a wait: no datapoint is not a zero wait.
  if (target.wait) {
    perTarget('TargetWaitP50', target.wait.p50Ms, MetricUnit.Milliseconds);
    perTarget('TargetWaitP99', target.wait.p99Ms, MetricUnit.Milliseconds);
    perTarget('TenantWaitMax', target.wait.maxMs, MetricUnit.Milliseconds);
  }
}
