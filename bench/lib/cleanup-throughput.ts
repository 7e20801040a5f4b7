import type { Pool } from 'pg';
import { chunk } from '../../lib/cleanup/jobs/deletions';
import { TIMEBASED_JOB } from '../../lib/cleanup/jobs/timebased';
import type { Env } from '../../lib/platform/config';
import { DEFAULT_DOCUMENT_TYPES } from '../../test/harness/cleanup-registry';
import { jobEnv, NOW, type Registry, retentionOf, stepper } from './cleanup-registry';
import { startBenchDynamo } from './hops';

/** About half of the generated documents (spread over 20 years) are past a 10-year retention. */
const HALF_RETENTION_DAYS = 3_650;
/** A safety net: the job deletes half a registry in far fewer invocations. */
const MAX_INVOCATIONS = 10_000;

/** What each raw run deletes a batch of ids with. */
export const rawStatements = {
  /** The deletion and its record in one statement, as the job's deletes do. */
  record: `WITH gone AS (DELETE FROM documents WHERE id = ANY($1::uuid[]) RETURNING id)
    INSERT INTO deleted_documents (document_id, deleted_at, reason) SELECT id, now(), 'bench' FROM gone`,
  bare: 'DELETE FROM documents WHERE id = ANY($1::uuid[])',
};

/** The eligible ids in the job's own order: type by type as configured, (created_at, id) within. */
async function eligibleInJobOrder(pool: Pool): Promise<string[]> {
  const cutoff = new Date(NOW.getTime() - HALF_RETENTION_DAYS * 86_400_000);
  const ids: string[] = [];
  for (const type of DEFAULT_DOCUMENT_TYPES) {
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM documents WHERE document_type = $1 AND created_at < $2 ORDER BY created_at, id',
      [type, cutoff],
    );
    for (const row of rows) ids.push(row.id);
  }
  return ids;
}

/**
 * Invocations of the product's step runner on the time-based job (the deployed settings, ranges
 * of `batch`), back to back, until it has deleted every eligible document; docs/s over their wall
 * time. dynalite runs in its own process behind a `delayMs` delay proxy.
 */
export async function stepRun(registry: Registry, deployed: Env, batch: number, delayMs: number): Promise<number> {
  const eligible = (await eligibleInJobOrder(registry.pool)).length;
  const env = jobEnv(registry, deployed, retentionOf(HALF_RETENTION_DAYS));
  const dynamo = await startBenchDynamo(delayMs);
  try {
    const start = performance.now();
    // The job's clock stands at NOW (retention cut-offs fixed) and runs in real time within a step, for the budget.
    const clock = () => NOW.getTime() + (performance.now() - start);
    const s = stepper(TIMEBASED_JOB, registry, dynamo.doc, env, clock, { timebasedBatchSize: batch });
    for (let invocations = 0; s.deleted() < eligible; invocations++) {
      if (invocations >= MAX_INVOCATIONS)
        throw new Error(`${s.deleted()} of ${eligible} deleted after ${MAX_INVOCATIONS} invocations`);
      await s.runSteps();
    }
    return eligible / ((performance.now() - start) / 1e3);
  } finally {
    await dynamo.stop();
  }
}

/** The same ids as the job deletes, read beforehand (not timed), in its order, batches of `batch` by `statement`, one connection. */
export async function rawRun({ pool }: Registry, batch: number, statement: string): Promise<number> {
  const batches = chunk(await eligibleInJobOrder(pool), batch);
  let deleted = 0;
  const start = performance.now();
  for (const ids of batches) deleted += (await pool.query(statement, [ids])).rowCount ?? 0;
  return deleted / ((performance.now() - start) / 1e3);
}
