import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DistributorReport, PassSummary, TargetSummary } from '../distributor/report';
import { waitReport } from '../distributor/waits';
import { errorText } from '../platform/errors';
import type { Observability } from './lambda-function';

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

export type Warn = (message: string, details: Record<string, unknown>) => void;

/** A report that words every event as one warning; a pass's end goes to `passed`, tuning and executions to `info`. */
export function warningReport(
  warn: Warn,
  passed: (summary: PassSummary) => void = () => undefined,
  info: Warn = () => undefined,
): DistributorReport {
  return {
    lengthTuned: (tuned) =>
      info(
        tuned.mode === 'apply'
          ? 'Target length tuned to the processing-time goal'
          : 'Target length tuning in noop mode: would set this length, changed nothing',
        { ...tuned },
      ),
    targetFailed: (target, error) =>
      warn('Distribution to a target failed; the next pass retries it', { target, error: errorText(error) }),
    targetMissing: (target, staging) =>
      warn('Staging queues have no target queue; skipped (DISTRIBUTOR_MISSING_TARGET=skip)', { target, staging }),
    movesCutShort: (target, queues) =>
      warn('Moves ended early: the channel or connection closed; nothing is lost, the next pass moves the rest', {
        target,
        queues,
      }),
    rotationConflict: (target) => warn("Rotation state changed under this pass; kept the other writer's", { target }),
    waitsNotRecorded: (target, error) =>
      warn('Could not keep the staging waits for the CLI; the next pass writes them', {
        target,
        error: errorText(error),
      }),
    reapFailed: (target, queue, error) =>
      warn('Could not reap an idle staging queue; the next backstop tries again', { target, queue, error }),
    leaseNotReleased: (target, error) =>
      warn('Could not release the lease; it expires by itself', { target, error: errorText(error) }),
    boardFailed: (action, error) =>
      warn("Could not use the work board; the schedule's next execution covers it", {
        action,
        error: errorText(error),
      }),
    controlsUnreadable: (error) =>
      warn('Could not read the tenant controls; distributed with the last ones read, and granted no target', {
        error: errorText(error),
      }),
    controlSkipped: (key, problem) =>
      warn('A tenant control entry is malformed and was skipped; the others apply', { key, problem }),
    backstopListed: (listed) => info('Backstop listing of the vhost', { ...listed }),
    executionEnded: ({ summaries: _, ...execution }) => info('Distributor execution', { execution }),
    noTimeToMove: (remainingMs, safetyMarginMs) =>
      warn('No time left for moves within the safety margin; only planning this pass', {
        remainingMs,
        safetyMarginMs,
      }),
    passed,
  };
}
