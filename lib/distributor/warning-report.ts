import { errorText } from '../platform/errors';
import type { DistributorReport, PassSummary } from './report';

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
