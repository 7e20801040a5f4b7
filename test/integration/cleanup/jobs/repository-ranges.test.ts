import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { nxrgNamesSchema } from '../../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import type { DeletionEvent, JobReport } from '../../../../lib/cleanup/report';
import { createStepRunner } from '../../../../lib/cleanup/step-runner';
import { cleanupJob, loadStepSettings } from '../../../../lib/wiring/cleanup';
import { leftByEarlierVersion } from '../../../harness/cleanup-earlier-stack';
import { noMarks } from '../../../harness/cleanup-job-marks';
import { generateRegistry } from '../../../harness/cleanup-registry';
import { silentCleanupReport } from '../../../harness/cleanup-report';
import { stepToEmpty } from '../../../harness/cleanup-step-to-empty';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

const TABLE = 'CleanupStackTable';
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/**
 * Issue 15: a DynamoDB operation on the cleanup stack must stay under 1 KB. The repository job
 * pushed `batch-delete` items of up to a batch of ids (1,000 UUIDs ≈ 40 KB); it now pushes keyset
 * ranges. Items an earlier version left on a deployed stack still run.
 */
describe('repository-cleanup on the stack (real PostgreSQL, dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;
  const events: DeletionEvent[] = [];
  const report: JobReport = { deleted: (e) => events.push(e), dropped: () => undefined };

  beforeAll(async () => {
    [dynamo, nxrg, openxds] = await Promise.all([startDynamo(), createTestSchema(), createTestSchema()]);
    await dynamo.createTables();
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop(), openxds?.drop()]);
  });
  beforeEach(() => events.splice(0));

  const runnerFor = (steps: number) =>
    createStepRunner(
      // Pages of a batch: the stack holds several settle ranges at once.
      cleanupJob(REPOSITORY_JOB, {}, { nxrg: nxrg.pool, openxds: openxds.pool }, report, {
        repositoryPageSize: 1000,
        repositoryBatchSize: 1000,
      }),
      loadStepSettings(
        { CLEANUP_TABLE: TABLE, NXRG_DATABASE_URL: nxrg.url, OPENXDS_DATABASE_URL: openxds.url },
        { stepsPerInvocation: steps },
      ),
      { doc: dynamo.doc, report: silentCleanupReport },
    );
  /** Every item of the job's stack partition, and the size of each as JSON (at least its DynamoDB size). */
  const stackItemSizes = async () => {
    const { Items = [] } = await dynamo.doc.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': REPOSITORY_JOB },
      }),
    );
    return Items.map((item) => ({ kind: String(item.kind), bytes: Buffer.byteLength(JSON.stringify(item)) }));
  };
  const pendingRecords = async () =>
    (await nxrg.pool.query('SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL')).rows.length;
  const storedCopies = async () =>
    (await openxds.pool.query('SELECT count(*)::int AS n FROM repository_documents')).rows[0].n as number;

  it('never holds a stack item of 1 KB or more while it settles batch after batch and rechecks re-appeared copies', async () => {
    // 4,000 pending deletions (four pages of 1,000) and 4,000 done, 600 of whose copies are back.
    await generateRegistry(nxrg.pool, openxds.pool, {
      seed: 'ranges',
      documents: 2_000,
      citizens: 100,
      earlierDeletions: 8_000,
      now: new Date('2026-06-01T00:00:00Z'),
    });
    await openxds.pool.query('INSERT INTO repository_documents SELECT unnest($1::uuid[])', [
      (
        await nxrg.pool.query<{ id: string }>(
          'SELECT document_id AS id FROM deleted_documents WHERE openxds_deleted_at IS NOT NULL ORDER BY md5(document_id::text) LIMIT 600',
        )
      ).rows.map((r) => r.id),
    ]);
    const copies = await storedCopies();
    expect(await pendingRecords()).toBe(4_000);

    const runSteps = runnerFor(1);
    let largest = { kind: '', bytes: 0 };
    let fills = 0;
    for (let step = 0; fills < 2; step++) {
      if (step > 200) throw new Error('the stack did not empty in 200 steps');
      const [result] = await runSteps();
      if (result?.fill) fills++;
      for (const item of await stackItemSizes()) if (item.bytes > largest.bytes) largest = item;
    }
    console.info(`largest repository stack item: ${largest.bytes} bytes (${largest.kind})`);

    expect(events.filter((e) => e.documentIds.length > 0).length).toBeGreaterThan(4);
    expect(largest.bytes).toBeLessThan(1024);
    expect(events.flatMap((e) => e.documentIds)).toHaveLength(4_600);
    expect(await storedCopies()).toBe(copies - 4_600);
    expect(await pendingRecords()).toBe(0);
  }, 60_000);

  it('one step settles a range of several batches in rounds, one OpenXDS DELETE per batch, and stops at the per-step cap with a continuation', async () => {
    await nxrg.pool.query('TRUNCATE documents, deleted_documents');
    await openxds.pool.query('TRUNCATE repository_documents');
    await nxrg.pool.query(
      `INSERT INTO deleted_documents (document_id, deleted_at, reason)
       SELECT ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid, now() - (100 - n) * interval '1 second', 'x'
       FROM generate_series(1, 35) n`,
    );
    await openxds.pool.query(
      `INSERT INTO repository_documents SELECT ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid FROM generate_series(1, 40) n`,
    );
    // The OpenXDS DELETEs the job sends (on a client of the pool: it locks the copies first), by the size of their id list.
    const deletes: number[] = [];
    const forwarded = <T extends object>(target: T, key: string | symbol) => {
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    };
    const counted = new Proxy(openxds.pool, {
      get(pool, key) {
        if (key !== 'connect') return forwarded(pool, key);
        return async () => {
          const client = await pool.connect();
          return new Proxy(client, {
            get(target, name) {
              if (name !== 'query') return forwarded(target, name);
              return (text: string, params?: unknown[][]) => {
                if (text.startsWith('DELETE')) deletes.push(params![0]!.length);
                return target.query(text, params);
              };
            },
          });
        };
      },
    });
    const job = cleanupJob(REPOSITORY_JOB, {}, { nxrg: nxrg.pool, openxds: counted }, report, {
      repositoryBatchSize: 10,
      repositoryPageSize: 100,
      maxDeletesPerStep: 25,
    });
    const context = { job: REPOSITORY_JOB, dryRun: false, now: () => new Date(), marks: noMarks };
    const execute = async (op: { kind: string; payload: unknown }) => {
      const kind = job.kinds[op.kind]!;
      return (await kind.execute(kind.payload.parse(op.payload), context)) ?? [];
    };

    const fill = await execute(job.defaultOperation);
    const settles = fill.filter((op) => op.kind === 'settle');
    expect(settles).toEqual([
      { kind: 'settle', payload: { after: null, through: { at: expect.any(String), id: uuid(35) } } },
    ]);
    const { through } = settles[0]!.payload as { through: unknown };
    // Two rounds of ten fit the cap of 25, a third would not.
    const rest = await execute(settles[0]!);
    expect(deletes).toEqual([10, 10]);
    expect(rest).toEqual([{ kind: 'settle', payload: { after: { at: expect.any(String), id: uuid(20) }, through } }]);
    expect(await pendingRecords()).toBe(15);
    expect(await execute(rest[0]!)).toEqual([]);
    expect(deletes).toEqual([10, 10, 10, 5]);
    expect(await pendingRecords()).toBe(0);
    expect(await storedCopies()).toBe(5);
    expect(events.flatMap((e) => e.documentIds)).toHaveLength(35);
    expect(events.map((e) => e.operation)).toEqual(['settle', 'settle', 'settle', 'settle']);
  });

  it('still runs a `batch-delete` item of ids an earlier version left on the stack', async () => {
    await nxrg.pool.query('TRUNCATE documents, deleted_documents');
    await openxds.pool.query('TRUNCATE repository_documents');
    // 1 and 2 pending, 3 done but its copy back, 4 pending but back in NXRG (kept).
    await nxrg.pool.query(
      `INSERT INTO deleted_documents (document_id, deleted_at, reason, openxds_deleted_at) VALUES
        ($1, now(), 'x', NULL), ($2, now(), 'x', NULL), ($3, now(), 'x', now()), ($4, now(), 'x', NULL)`,
      [1, 2, 3, 4].map(uuid),
    );
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at) VALUES ($1, 'referral', '0101010101', now())`,
      [uuid(4)],
    );
    await openxds.pool.query('INSERT INTO repository_documents SELECT unnest($1::uuid[])', [[1, 2, 3, 4, 5].map(uuid)]);
    await leftByEarlierVersion(dynamo.doc, TABLE, REPOSITORY_JOB, {
      kind: 'batch-delete',
      payload: { ids: [1, 2, 3, 4].map(uuid) },
    });
    const [result] = await runnerFor(1)();
    expect(result).toMatchObject({ kind: 'batch-delete', outcome: 'executed' });
    const stored = await openxds.pool.query<{ id: string }>(
      'SELECT document_id::text AS id FROM repository_documents ORDER BY 1',
    );
    expect(stored.rows.map((r) => r.id)).toEqual([uuid(4), uuid(5)]);
    const pending = await nxrg.pool.query<{ id: string }>(
      'SELECT document_id::text AS id FROM deleted_documents WHERE openxds_deleted_at IS NULL',
    );
    expect(pending.rows.map((r) => r.id)).toEqual([uuid(4)]);
    expect(events.flatMap((e) => e.documentIds).sort()).toEqual([1, 2, 3].map(uuid));
  });

  it('is correct on a registry that still has the earlier pending index, and the DDL applied again replaces it', async () => {
    const legacy = await createTestSchema();
    try {
      // Schema-qualified, as a deployment whose tables live outside search_path names them.
      const names = nxrgNamesSchema.parse({ deletedDocuments: { table: `${legacy.schema}.deleted_documents` } });
      await legacy.pool.query(nxrgSchemaSql(names));
      // The earlier version's table: a primary key, the pending index on (document_id), no done index.
      await legacy.pool.query(`DROP INDEX deleted_documents_pending_time_idx, deleted_documents_done_idx;
        ALTER TABLE deleted_documents ADD PRIMARY KEY (document_id);
        CREATE INDEX deleted_documents_pending_idx ON deleted_documents (document_id) WHERE openxds_deleted_at IS NULL`);
      await openxds.pool.query('TRUNCATE repository_documents');
      await legacy.pool.query(
        `INSERT INTO deleted_documents (document_id, deleted_at, reason)
         SELECT ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid, now() - n * interval '1 second', 'x'
         FROM generate_series(1, 2500) n`,
      );
      await openxds.pool.query(
        `INSERT INTO repository_documents SELECT ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid FROM generate_series(1, 2600) n`,
      );
      const job = cleanupJob(
        REPOSITORY_JOB,
        { NXRG_NAMES: JSON.stringify({ deletedDocuments: { table: `${legacy.schema}.deleted_documents` } }) },
        { nxrg: legacy.pool, openxds: openxds.pool },
        report,
      );
      await stepToEmpty(job, { doc: dynamo.doc, table: TABLE, dryRun: false, now: new Date(), steppers: 1 });
      expect(await storedCopies()).toBe(100);
      expect(
        (await legacy.pool.query('SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL')).rows,
      ).toEqual([]);

      await legacy.pool.query(nxrgSchemaSql(names));
      const { rows } = await legacy.pool.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'deleted_documents' ORDER BY 1`,
        [legacy.schema],
      );
      // The DDL keeps the primary key (dropping it is a step of the migration, docs/cleanup.md).
      expect(rows.map((r) => r.name)).toEqual([
        'deleted_documents_done_idx',
        'deleted_documents_pending_time_idx',
        'deleted_documents_pkey',
      ]);
    } finally {
      await legacy.drop();
    }
  });
});
