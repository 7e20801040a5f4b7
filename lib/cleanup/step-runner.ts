import type { CleanupConfig } from '../config/cleanup';
import { createCleanupEngine, type StepResult } from './engine/engine';
import type { JobDefinition } from './engine/job-definition';
import type { Random } from './engine/random';
import type { DocumentPort } from './engine/stack-store';
import type { CleanupReport } from './report';

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
export function createStepRunner(job: JobDefinition, config: CleanupConfig, adapters: StepRunnerAdapters) {
  const clock = adapters.clock ?? Date.now;
  const { report } = adapters;
  const engine = createCleanupEngine(
    job,
    {
      dryRun: config.CLEANUP_DRY_RUN,
      maxAttempts: config.CLEANUP_MAX_ATTEMPTS,
      leaseMs: config.CLEANUP_LEASE_SECONDS * 1000,
      maxPayloadBytes: config.CLEANUP_MAX_PAYLOAD_BYTES,
    },
    { doc: adapters.doc, table: config.CLEANUP_TABLE, clock, random: adapters.random },
  );
  const budgetMs = config.CLEANUP_TIME_BUDGET_SECONDS * 1000;

  return async function runSteps(): Promise<StepResult[]> {
    const started = clock();
    const results: StepResult[] = [];
    while (
      results.length < config.CLEANUP_STEPS_PER_INVOCATION &&
      (results.length === 0 || clock() - started < budgetMs)
    ) {
      let result: StepResult;
      try {
        result = await engine.step();
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
