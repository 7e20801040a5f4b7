import { createCleanupEngine, type StepResult } from './engine/engine';
import type { JobDefinition } from './engine/job-definition';
import type { Random } from './engine/random';
import type { DocumentPort } from './engine/stack-store';
import type { CleanupReport } from './report';
import type { StepSettings } from './settings';

export interface StepRunnerAdapters {
  doc: DocumentPort;
  report: Pick<CleanupReport, 'stepped' | 'stepFailed'>;
  random?: Random;
  clock?: () => number;
}

/**
 * The per-invocation core of a cleanup function: one step of `job`, or several while the
 * configured number of steps and time budget allow. It stops early when there is nothing it
 * can claim, and after a fill, so one invocation never fills the stack twice.
 */
export function createStepRunner(job: JobDefinition, settings: StepSettings, adapters: StepRunnerAdapters) {
  const clock = adapters.clock ?? Date.now;
  const { report } = adapters;
  const engine = createCleanupEngine(
    job,
    {
      dryRun: settings.dryRun,
      maxAttempts: settings.maxAttempts,
      leaseMs: settings.leaseMs,
      maxPayloadBytes: settings.maxPayloadBytes,
    },
    { doc: adapters.doc, table: settings.table, clock, random: adapters.random },
  );
  const budgetMs = settings.timeBudgetMs;
  // Once per container, before the first step; a failed check is tried again by the next invocation.
  let verified: Promise<void> | undefined;

  return async function runSteps(): Promise<StepResult[]> {
    verified ??= (job.verify?.() ?? Promise.resolve()).catch((error: unknown) => {
      verified = undefined;
      report.stepFailed(job.name, error);
      throw error;
    });
    await verified;
    const started = clock();
    const results: StepResult[] = [];
    while (results.length < settings.stepsPerInvocation && (results.length === 0 || clock() - started < budgetMs)) {
      let result: StepResult;
      try {
        result = await engine.step(started + budgetMs);
      } catch (error) {
        // An infrastructure failure: the claim's lease expires and another invocation retries.
        report.stepFailed(job.name, error);
        throw error;
      }
      report.stepped(result);
      results.push(result);
      if (result.fill || result.outcome === 'busy' || result.outcome === 'no-operations') break;
    }
    return results;
  };
}
