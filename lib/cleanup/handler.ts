import type { CleanupConfig } from '../config/cleanup';
import { logger, metrics } from '../runtime/observability';
import { createCleanupEngine, type EngineAdapters, type StepResult } from './engine/engine';
import type { Random } from './engine/random';
import { reportStep } from './engine/report';
import type { DocumentPort } from './engine/store';
import type { JobDefinition } from './engine/types';

export interface CleanupAdapters {
  doc: DocumentPort;
  random?: Random;
  clock?: () => number;
}

/**
 * The core of a cleanup function: one step of `job` per invocation, or several while the
 * configured number of steps and time budget allow. It stops early when there is nothing it
 * can claim, and after a fill, so one invocation never fills the stack twice.
 */
export function createCleanupHandler(job: JobDefinition, config: CleanupConfig, adapters: CleanupAdapters) {
  const clock = adapters.clock ?? Date.now;
  const engineAdapters: EngineAdapters = {
    doc: adapters.doc,
    table: config.CLEANUP_TABLE,
    clock,
    random: adapters.random,
  };
  const engine = createCleanupEngine(
    job,
    {
      dryRun: config.CLEANUP_DRY_RUN,
      maxAttempts: config.CLEANUP_MAX_ATTEMPTS,
      leaseMs: config.CLEANUP_LEASE_SECONDS * 1000,
      maxPayloadBytes: config.CLEANUP_MAX_PAYLOAD_BYTES,
    },
    engineAdapters,
  );
  const budgetMs = config.CLEANUP_TIME_BUDGET_SECONDS * 1000;
  // Once per container, before the first step; a failed check is tried again by the next invocation.
  let verified: Promise<void> | undefined;

  return async (): Promise<StepResult[]> => {
    verified ??= (job.verify?.() ?? Promise.resolve()).catch((error: unknown) => {
      verified = undefined;
      logger.error('cleanup job refused to run', { job: job.name, error: error as Error });
      throw error;
    });
    await verified;
    const started = clock();
    const results: StepResult[] = [];
    metrics.addDimension('job', job.name);
    while (
      results.length < config.CLEANUP_STEPS_PER_INVOCATION &&
      (results.length === 0 || clock() - started < budgetMs)
    ) {
      let result: StepResult;
      try {
        result = await engine.step();
      } catch (error) {
        // An infrastructure failure (DynamoDB unreachable, throttled): the claim's lease expires and another invocation retries.
        logger.error('cleanup step failed', { job: job.name, error: error as Error });
        throw error;
      }
      reportStep(result);
      results.push(result);
      if (result.fill || result.outcome === 'busy' || result.outcome === 'no-operations') break;
    }
    return results;
  };
}
