import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Pool } from 'pg';
import { createCleanupEngine } from '../lib/cleanup/engine/engine';
import type { JobDefinition } from '../lib/cleanup/engine/job-definition';
import { seededRandom as engineRandom } from '../lib/cleanup/engine/random';
import { cleanupJob } from '../lib/cleanup/jobs';
import { chunk } from '../lib/cleanup/jobs/deletions';
import { TIMEBASED_JOB } from '../lib/cleanup/jobs/timebased';
import { startDynamo } from '../local/embedded-dynamo';
import { DEFAULT_DOCUMENT_TYPES, generateRegistry } from '../test/harness/registry/generate';
import { expiredDocumentIds } from '../test/harness/registry/oracle';
import { stepToEmpty } from '../test/harness/registry/step-to-empty';
import { type Benchmark, ratio } from './lib/benchmark';
import { peakMemory } from './lib/counters';
import { countingDynamoProxy, dynamoWrites } from './lib/dynamo-proxy';
import { type Row, type Table, timed } from './lib/report';
import { createBenchSchema } from './lib/services';

type Flags = 'documents' | 'batch' | 'steppers' | 'memoryDocuments' | 'pageSize';

const JOB = TIMEBASED_JOB;
/** The moment the registry is generated against and the job runs at, so retention cut-offs are fixed. */
const NOW = new Date('2026-06-01T00:00:00Z');
/** Retention of the throughput runs (about half the generated documents are older) and of the memory run (all). */
const RETENTION_DAYS = 3_650;
const RETAIN_NOTHING_DAYS = 1;
const DAY_MS = 86_400_000;
/** The engine settings of the supplier-memory step (stepToEmpty sets its own, alike). */
const ENGINE = { dryRun: false, maxAttempts: 3, leaseMs: 300_000, maxPayloadBytes: 350_000 };

/**
 * SPEC §4 cleanup: registry-timebased-cleanup stepped through the real engine (DynamoDB stack in
 * dynalite) until its stack is empty, on a generated NXRG registry in PostgreSQL, against raw
 * `DELETE … WHERE id = ANY($1)` batches of the same ids and size on the same database; and the
 * memory of one supplier step over a million matching documents against fetching them all.
 */
export const cleanupBench: Benchmark<Flags> = {
  name: 'cleanup',
  summary:
    'timebased cleanup: documents deleted per second against raw DELETE batches, DynamoDB requests per step, supplier memory',
  flags: {
    documents: {
      quick: 200_000,
      tiny: 2_000,
      help: 'documents in each generated registry (about half are past retention)',
    },
    batch: { quick: 1_000, tiny: 100, help: 'ids per batch delete (CLEANUP_TIMEBASED_BATCH_SIZE), and per raw DELETE' },
    steppers: { quick: 4, tiny: 2, help: 'concurrent steppers (invocations) compared with one' },
    memoryDocuments: { quick: 1_000_000, tiny: 5_000, help: 'matching documents under the measured supplier step' },
    pageSize: { quick: 10_000, tiny: 1_000, help: 'ids a type-based step reads (CLEANUP_TIMEBASED_PAGE_SIZE)' },
  },
  async run(flags, progress) {
    const rows: Row[] = [];
    const perStep: Row[] = [];
    let rawOne = 0;
    for (const steppers of [1, flags.steppers]) {
      const raw = await withRegistry(flags.documents, DEFAULT_DOCUMENT_TYPES, async (pool) =>
        rawDeletes(pool, flags.batch, steppers, false),
      );
      const fairway = await withRegistry(flags.documents, DEFAULT_DOCUMENT_TYPES, async (pool) =>
        jobToEmpty(pool, flags, steppers),
      );
      if (fairway.deleted !== raw.deleted)
        throw new Error(`the job deleted ${fairway.deleted} documents, raw DELETEs ${raw.deleted}`);
      rawOne ||= raw.deleted / raw.seconds;
      const rawRate = raw.deleted / raw.seconds;
      const rate = fairway.deleted / fairway.seconds;
      rows.push(
        {
          run: `raw DELETE … WHERE id = ANY($1), ${flags.batch} ids, ${steppers} connection(s) at once`,
          documents: raw.deleted,
          'docs/s': rawRate,
          '÷ raw, same concurrency': 1,
          '÷ raw, 1 connection': ratio(rawRate, rawOne),
        },
        {
          run: `Fairway timebased job to empty, ${steppers} stepper(s) at once`,
          documents: fairway.deleted,
          'docs/s': rate,
          '÷ raw, same concurrency': ratio(rate, rawRate),
          '÷ raw, 1 connection': ratio(rate, rawOne),
        },
      );
      perStep.push({
        steppers,
        steps: fairway.steps,
        'of which busy': fairway.busy,
        'DynamoDB requests': fairway.requests,
        'requests per step': fairway.requests / fairway.steps,
        'writes per step': fairway.writes / fairway.steps,
        'requests per document deleted': fairway.requests / fairway.deleted,
        'time in DynamoDB ÷ run time': fairway.dynamoSeconds / (fairway.seconds * steppers),
        'by operation': fairway.byOperation,
      });
      if (steppers === 1) {
        // Same DELETE plus the record the job keeps of each deletion: separates the database's work from the job's.
        const recorded = await withRegistry(flags.documents, DEFAULT_DOCUMENT_TYPES, (pool) =>
          rawDeletes(pool, flags.batch, 1, true),
        );
        const recordedRate = recorded.deleted / recorded.seconds;
        rows.push({
          run: `raw DELETE … RETURNING + INSERT INTO deleted_documents, ${flags.batch} ids, 1 connection`,
          documents: recorded.deleted,
          'docs/s': recordedRate,
          '÷ raw, same concurrency': ratio(recordedRate, rawRate),
          '÷ raw, 1 connection': ratio(recordedRate, rawOne),
        });
      }
      progress(
        `${steppers} stepper(s): job ${fairway.seconds.toFixed(1)} s, raw ${raw.seconds.toFixed(1)} s for ${raw.deleted} documents`,
      );
    }
    const memory = await withRegistry(flags.memoryDocuments, ['referral'], (pool) => supplierMemory(pool, flags));
    progress(`supplier step over ${memory.matching} matching documents measured`);

    const throughput: Table = {
      title: `Cleanup throughput: registry-timebased-cleanup to empty over ${flags.documents} documents, batches of ${flags.batch}`,
      rows,
      notes: [
        `Each run gets a freshly generated registry (same seed); retention ${RETENTION_DAYS} days on every type deletes about ` +
          'half. The raw runs delete exactly the ids the job deletes (read beforehand, not timed). The job also reads ' +
          'its pages, re-checks retention in each DELETE, records every deletion in deleted_documents (for the ' +
          'repository cleanup), and keeps its stack in DynamoDB (dynalite, in process).',
      ],
    };
    const requests: Table = {
      title: 'Cleanup: DynamoDB requests per step (counted on the wire)',
      rows: perStep,
      notes: [
        'A busy step found every operation claimed by another stepper and waited; it still costs its reads. Time in ' +
          "DynamoDB: the requests' durations summed, over the steppers' time (steppers × run time).",
      ],
    };
    const supplier: Table = {
      title: `Cleanup: one supplier step over ${memory.matching} matching documents`,
      rows: [
        {
          step: 'fetch every matching id, then chunk (what the seed describes)',
          'peak heap MiB': memory.naive.peakHeapMiB,
          seconds: memory.naive.seconds,
          'heap ÷ naive': 1,
        },
        {
          step: `Fairway type-based step (page of ${flags.pageSize}, continuation)`,
          'peak heap MiB': memory.fairway.peakHeapMiB,
          seconds: memory.fairway.seconds,
          'heap ÷ naive': ratio(memory.fairway.peakHeapMiB, memory.naive.peakHeapMiB),
        },
      ],
      notes: [
        'Peak JavaScript heap above what was in use before the step (after a GC), sampled every 5 ms; every document ' +
          `of the registry matches (retention ${RETAIN_NOTHING_DAYS} day). The Fairway step reads one page ` +
          'and pushes its batch deletes and a continuation; its memory depends on the page size, not on the number of ' +
          'matching documents.',
      ],
    };
    return [throughput, requests, supplier];
  },
};

/** Runs `work` on a freshly generated registry in a schema of its own, dropped afterwards. */
async function withRegistry<T>(
  documents: number,
  types: readonly string[],
  work: (pool: Pool) => Promise<T>,
): Promise<T> {
  const schema = await createBenchSchema('cleanup');
  try {
    await generateRegistry(schema.pool, schema.pool, {
      seed: 'bench',
      documents,
      citizens: Math.max(10, Math.floor(documents / 10)),
      earlierDeletions: 0,
      documentTypes: types,
      now: NOW,
    });
    return await work(schema.pool);
  } finally {
    await schema.drop();
  }
}

function jobFor(
  pool: Pool,
  types: readonly string[],
  flags: Record<Flags, number>,
  retentionDays: number,
): JobDefinition {
  return cleanupJob(
    JOB,
    {
      NXRG_DOCUMENT_TYPES: types.join(','),
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify(Object.fromEntries(types.map((t) => [t, { retentionDays }]))),
      CLEANUP_TIMEBASED_BATCH_SIZE: String(flags.batch),
      CLEANUP_TIMEBASED_PAGE_SIZE: String(flags.pageSize),
    },
    { nxrg: pool, openxds: pool },
    { deleted: () => undefined, dropped: () => undefined },
  );
}

/** Steps the job with `steppers` engines at once from an empty stack until the stack is empty again. */
async function jobToEmpty(pool: Pool, flags: Record<Flags, number>, steppers: number) {
  const before = await expired(pool, DEFAULT_DOCUMENT_TYPES, RETENTION_DAYS);
  const dynamo = await startDynamo();
  const proxy = await countingDynamoProxy(dynamo.endpoint);
  const client = new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  try {
    await dynamo.createTables();
    proxy.reset();
    const job = jobFor(pool, DEFAULT_DOCUMENT_TYPES, flags, RETENTION_DAYS);
    const { result: outcomes, seconds } = await timed(() =>
      stepToEmpty(job, { doc, table: 'CleanupStackTable', dryRun: false, now: NOW, steppers }),
    );
    const operations = proxy.byOperation();
    const left = await expired(pool, DEFAULT_DOCUMENT_TYPES, RETENTION_DAYS);
    if (left.length > 0) throw new Error(`${left.length} expired documents left after the job emptied its stack`);
    return {
      seconds,
      deleted: before.length,
      steps: Object.values(outcomes).reduce((a, b) => a + b, 0),
      busy: outcomes.busy ?? 0,
      requests: proxy.total(),
      writes: proxy.count(...dynamoWrites),
      dynamoSeconds: proxy.waitedMs() / 1e3,
      byOperation: [...operations].map(([op, n]) => `${op} ${n}`).join(', '),
    };
  } finally {
    client.destroy();
    await proxy.close();
    await dynamo.stop();
  }
}

/** The documents SPEC §4 says must go (the jobs' SQL oracle), for the baselines and the checks. */
const expired = (pool: Pool, types: readonly string[], retentionDays: number) =>
  expiredDocumentIds(
    pool,
    types.map((documentType) => ({ documentType, retentionDays, basis: 'created' as const })),
    NOW,
  );

const rawDelete = 'DELETE FROM documents WHERE id = ANY($1::uuid[])';
const rawDeleteAndRecord = `WITH gone AS (DELETE FROM documents WHERE id = ANY($1::uuid[]) RETURNING id)
  INSERT INTO deleted_documents (document_id, deleted_at, reason) SELECT id, now(), 'bench' FROM gone`;

/**
 * The baseline: the same expired ids, deleted in batches of `batch` by `connections` connections
 * at once; with `record`, each batch also records its deletions as the job does.
 */
async function rawDeletes(pool: Pool, batch: number, connections: number, record: boolean) {
  const batches = chunk(await expired(pool, DEFAULT_DOCUMENT_TYPES, RETENTION_DAYS), batch);
  let deleted = 0;
  const { seconds } = await timed(() =>
    Promise.all(
      Array.from({ length: connections }, async () => {
        for (let ids = batches.shift(); ids; ids = batches.shift()) {
          const result = await pool.query(record ? rawDeleteAndRecord : rawDelete, [ids]);
          deleted += result.rowCount ?? 0;
        }
      }),
    ),
  );
  return { seconds, deleted };
}

/** Peak memory of the type-based step (the supplier) over every matching document, and of fetching them all at once. */
async function supplierMemory(pool: Pool, flags: Record<Flags, number>) {
  const cutoff = new Date(NOW.getTime() - RETAIN_NOTHING_DAYS * DAY_MS);
  // Counted in SQL: the oracle spreads its ids into push(), which overflows the stack near a million.
  const { rows: counted } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM documents WHERE document_type = $1 AND created_at < $2',
    ['referral', cutoff],
  );
  const matching = Number(counted[0]!.n);
  const naive = await timed(() =>
    peakMemory(async () => {
      const { rows } = await pool.query<{ id: string }>(
        'SELECT id FROM documents WHERE document_type = $1 AND created_at < $2 ORDER BY created_at, id',
        ['referral', cutoff],
      );
      return chunk(
        rows.map((r) => r.id),
        flags.batch,
      ).length;
    }),
  );

  const dynamo = await startDynamo();
  try {
    await dynamo.createTables();
    const engine = createCleanupEngine(jobFor(pool, ['referral'], flags, RETAIN_NOTHING_DAYS), ENGINE, {
      doc: dynamo.doc,
      table: 'CleanupStackTable',
      random: engineRandom(1),
      clock: () => NOW.getTime(),
    });
    const fill = await engine.step();
    if (!fill.fill) throw new Error(`expected the first step to fill the stack, got ${fill.outcome}`);
    const step = await timed(() => peakMemory(() => engine.step()));
    const result = step.result.result;
    if (result.kind !== 'type-based' || result.outcome !== 'supplied') {
      throw new Error(`expected the second step to run the type-based supplier, got ${result.outcome} ${result.kind}`);
    }
    return {
      matching,
      naive: { peakHeapMiB: naive.result.peakHeapMiB, seconds: naive.seconds },
      fairway: { peakHeapMiB: step.result.peakHeapMiB, seconds: step.seconds },
    };
  } finally {
    await dynamo.stop();
  }
}
