import type { Pool } from 'pg';
import type { StepResult } from '../../lib/cleanup/engine/engine';
import { seededRandom } from '../../lib/cleanup/engine/random';
import type { DocumentPort } from '../../lib/cleanup/engine/stack-store';
import type { CleanupJobName } from '../../lib/cleanup/jobs';
import { createStepRunner } from '../../lib/cleanup/step-runner';
import type { Env } from '../../lib/platform/config';
import { type CleanupTuning, cleanupJob, loadStepSettings } from '../../lib/wiring/cleanup';
import { DEFAULT_DOCUMENT_TYPES, generateRegistry } from '../../test/harness/cleanup-registry';
import { createBenchSchema } from './services';

/** The moment registries are generated against and replays start at. */
export const NOW = new Date('2026-06-01T00:00:00Z');
/** The stack's table as local/embedded-dynamo.ts creates it (named by its logical id). */
const TABLE = 'CleanupStackTable';

/** A generated registry: NXRG and OpenXDS tables in one schema; its pool, and its URL for the job's configuration. */
export interface Registry {
  pool: Pool;
  url: string;
}

/**
 * Runs `work` on a freshly generated registry (same seed: the same sizes give the same data) in a
 * schema of its own, dropped afterwards. `earlierDeletions`: deletion records from before, half of
 * them still pending in OpenXDS.
 */
export async function withRegistry<T>(
  sizes: { documents: number; earlierDeletions?: number },
  work: (db: Registry) => Promise<T>,
): Promise<T> {
  const schema = await createBenchSchema('cleanup');
  try {
    await generateRegistry(schema.pool, schema.pool, {
      seed: 'bench',
      documents: sizes.documents,
      citizens: Math.max(10, Math.floor(sizes.documents / 10)),
      earlierDeletions: sizes.earlierDeletions ?? 0,
      now: NOW,
    });
    await schema.pool.query('VACUUM ANALYZE documents, citizens, deleted_documents, repository_documents');
    return await work({ pool: schema.pool, url: schema.url });
  } finally {
    await schema.drop();
  }
}

/** The time-based job's rules: every generated type kept `retentionDays` after its creation. */
export const retentionOf = (retentionDays: number): Env => ({
  NXRG_DOCUMENT_TYPES: DEFAULT_DOCUMENT_TYPES.join(','),
  CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify(
    Object.fromEntries(DEFAULT_DOCUMENT_TYPES.map((t) => [t, { retentionDays }])),
  ),
});

/**
 * A job's environment on `registry`: the deployed settings, then the bench's own (the registry for
 * both databases, the local table), and deleting for real (serverless.yml's default is a dry run).
 */
export const jobEnv = ({ url }: Registry, deployed: Env, overrides: Env = {}): Env => ({
  ...deployed,
  CLEANUP_TABLE: TABLE,
  NXRG_DATABASE_URL: url,
  OPENXDS_DATABASE_URL: url,
  CLEANUP_DRY_RUN: 'false',
  ...overrides,
});

export interface Stepper {
  /** One invocation of the function: the product's step runner. */
  runSteps: () => Promise<StepResult[]>;
  /** Documents the job reported deleted so far. */
  deleted: () => number;
}

/**
 * The product's step runner on `job` (its settings validated as at cold start), reporting
 * deletions into a counter. Fails on a step that failed: a bench figure from a job that errs
 * would say nothing.
 */
export function stepper(
  job: CleanupJobName,
  { pool }: Registry,
  doc: DocumentPort,
  env: Env,
  clock: () => number,
  tuning: Partial<CleanupTuning> = {},
) {
  let deleted = 0;
  const definition = cleanupJob(
    job,
    env,
    { nxrg: pool, openxds: pool },
    { deleted: (e) => (deleted += e.documentIds.length), dropped: () => undefined },
    tuning,
  );
  const runSteps = createStepRunner(definition, loadStepSettings(env, tuning), {
    doc,
    clock,
    random: seededRandom(1),
    report: { stepped: () => undefined, stepFailed: () => undefined },
  });
  return {
    async runSteps() {
      const results = await runSteps();
      const failed = results.find((r) => r.outcome === 'failed' || r.outcome === 'dead-lettered');
      if (failed) throw new Error(`${job}: a ${failed.kind} step ${failed.outcome}: ${failed.error}`);
      return results;
    },
    deleted: () => deleted,
  } satisfies Stepper;
}
