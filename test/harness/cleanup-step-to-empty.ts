import { createCleanupEngine, type StepResult } from '../../lib/cleanup/engine/engine';
import type { JobDefinition, OperationKind } from '../../lib/cleanup/engine/job-definition';
import { seededRandom } from '../../lib/cleanup/engine/random';
import type { DocumentPort } from '../../lib/cleanup/engine/stack-store';

export interface StepToEmptyOptions {
  doc: DocumentPort;
  table: string;
  dryRun: boolean;
  /** The time every operation sees (context.now()), fixed so a test can compare with an oracle. */
  now: Date;
  /** Concurrent invocations stepping the same stack. */
  steppers: number;
  maxSteps?: number;
}

/**
 * Steps `job` through the real cleanup engine, `steppers` invocations at once, from an empty stack
 * until the stack is empty again: the default operation's second run (the engine refilling the empty
 * stack) marks the end and supplies nothing. Returns how many steps each outcome took. A failed or
 * dead-lettered step fails the run: the jobs under test must never throw.
 */
export async function stepToEmpty(job: JobDefinition, options: StepToEmptyOptions): Promise<Record<string, number>> {
  let fills = 0;
  const fillKind = job.kinds[job.defaultOperation.kind]! as OperationKind<unknown>;
  const fillPayload = JSON.stringify(job.defaultOperation.payload);
  const counted: JobDefinition = {
    ...job,
    kinds: {
      ...job.kinds,
      [job.defaultOperation.kind]: {
        payload: fillKind.payload,
        async execute(payload, context) {
          // The same kind may also be a continuation (with a cursor); only the default payload is a fill.
          if (JSON.stringify(payload) === fillPayload && ++fills > 1) return [];
          return fillKind.execute(payload, context);
        },
      },
    },
  };
  const outcomes: Record<string, number> = {};
  let steps = 0;
  await Promise.all(
    Array.from({ length: options.steppers }, async (_, stepper) => {
      const engine = createCleanupEngine(
        counted,
        { dryRun: options.dryRun, maxAttempts: 3, leaseMs: 300_000, maxPayloadBytes: 350_000 },
        {
          doc: options.doc,
          table: options.table,
          random: seededRandom(stepper + 1),
          clock: () => options.now.getTime(),
        },
      );
      while (fills < 2) {
        if (++steps > (options.maxSteps ?? 20_000))
          throw new Error(`${job.name}: stack not empty after ${steps} steps`);
        const result: StepResult = await engine.step();
        outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
        if (result.outcome === 'failed' || result.outcome === 'dead-lettered' || result.outcome === 'no-operations') {
          throw new Error(`${job.name}: step ${result.outcome} on ${result.kind}: ${result.error}`);
        }
        if (result.outcome === 'busy') await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }),
  );
  return outcomes;
}
