import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { TIMEBASED_JOB } from '../../../../lib/cleanup/jobs/timebased';
import { defaultNxrgNames } from '../../../../lib/cleanup/nxrg/names';
import { ExpiredDocuments, type ExpiryRule } from '../../../../lib/cleanup/nxrg/timebased';
import { DatabaseError } from '../../../../lib/platform/errors';
import { cleanupJob } from '../../../../lib/wiring/cleanup';
import { leftByEarlierVersion } from '../../../harness/cleanup-earlier-stack';
import { silentCleanupReport } from '../../../harness/cleanup-report';
import { stepToEmpty } from '../../../harness/cleanup-step-to-empty';
import { type CleanupStores, startCleanupStores } from '../../../harness/cleanup-stores';
import type { EmbeddedDynamo } from '../../../harness/dynamo';
import type { TestSchema } from '../../../harness/postgres';

const TABLE = 'CleanupStackTable';
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;
const rule: ExpiryRule = { documentType: 'referral', basis: 'created', cutoff: new Date('2020-01-01T00:00:00Z') };
const deletion = (at: string) => ({ reason: 'registry-timebased-cleanup', at: new Date(at), dryRun: false });

/**
 * Issue 15: the deletion record is appended (no primary key on document_id: its random uuid insert was
 * most of what recording cost). A document deleted again after a restore gets a second, pending record;
 * a table that still has an earlier version's primary key keeps working (its record is reset, as before).
 */
describe('the deletion record, appended or keyed (real PostgreSQL, dynalite)', () => {
  let stores: CleanupStores;
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;

  beforeAll(async () => {
    stores = await startCleanupStores();
    ({ dynamo, nxrg, openxds } = stores);
  });
  afterAll(() => stores?.stop());
  beforeEach(async () => {
    await nxrg.pool.query(`TRUNCATE documents, deleted_documents;
      ALTER TABLE deleted_documents DROP CONSTRAINT IF EXISTS deleted_documents_pkey`);
    await openxds.pool.query('TRUNCATE repository_documents');
  });

  /** Documents (expired referrals) into NXRG and their copies into OpenXDS: a first upload or a restore. */
  const restore = async (...ns: number[]) => {
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       SELECT unnest($1::uuid[]), 'referral', '0101010101', '2010-01-01'`,
      [ns.map(uuid)],
    );
    await openxds.pool.query('INSERT INTO repository_documents SELECT unnest($1::uuid[]) ON CONFLICT DO NOTHING', [
      ns.map(uuid),
    ]);
  };
  const records = async () =>
    (
      await nxrg.pool.query<{ id: string; done: boolean }>(
        `SELECT document_id::text AS id, openxds_deleted_at IS NOT NULL AS done FROM deleted_documents
         ORDER BY deleted_at, document_id`,
      )
    ).rows;
  const copies = async () =>
    (await openxds.pool.query<{ id: string }>('SELECT document_id::text AS id FROM repository_documents ORDER BY 1'))
      .rows;
  const settleAll = () =>
    stepToEmpty(
      cleanupJob(REPOSITORY_JOB, {}, { nxrg: nxrg.pool, openxds: openxds.pool }, silentCleanupReport, {
        repositoryBatchSize: 2,
        repositoryPageSize: 10,
      }),
      { doc: dynamo.doc, table: TABLE, dryRun: false, now: new Date(), steppers: 2 },
    );

  it('appends a second, pending record for a document deleted again after a restore, and the repository job deletes its copy', async () => {
    const registry = new ExpiredDocuments(nxrg.pool, defaultNxrgNames);
    await restore(1, 2);
    expect(await registry.deleteExpiredRange(rule, { after: null, through: null }, deletion('2026-01-01'))).toEqual([
      uuid(1),
      uuid(2),
    ]);
    expect(await registry.recordShape()).toBe('appended');
    await settleAll();
    expect(await copies()).toEqual([]);
    // Document 1 is restored (NXRG and OpenXDS) and deleted again.
    await restore(1);
    await registry.deleteExpiredRange(rule, { after: null, through: null }, deletion('2026-02-01'));
    expect(await records()).toEqual([
      { id: uuid(1), done: true },
      { id: uuid(2), done: true },
      { id: uuid(1), done: false },
    ]);
    await settleAll();
    expect(await copies()).toEqual([]);
    expect((await records()).map((r) => r.done)).toEqual([true, true, true]);

    // Document 3 deleted, restored and deleted again before the repository job runs: two pending
    // records in one range, one OpenXDS delete, both marked.
    for (const at of ['2026-03-01', '2026-03-02']) {
      await restore(3);
      await registry.deleteExpiredRange(rule, { after: null, through: null }, deletion(at));
    }
    await settleAll();
    expect(await copies()).toEqual([]);
    expect((await records()).filter((r) => r.id === uuid(3))).toEqual([
      { id: uuid(3), done: true },
      { id: uuid(3), done: true },
    ]);
  });

  it('on a table that still has the primary key, resets the one record as before; after the key is dropped, the retry appends', async () => {
    await nxrg.pool.query(
      'ALTER TABLE deleted_documents ADD CONSTRAINT deleted_documents_pkey PRIMARY KEY (document_id)',
    );
    const registry = new ExpiredDocuments(nxrg.pool, defaultNxrgNames);
    expect(await registry.recordShape()).toBe('keyed');
    await restore(1);
    await registry.deleteExpiredRange(rule, { after: null, through: null }, deletion('2026-01-01'));
    await settleAll();
    await restore(1);
    await registry.deleteExpiredRange(rule, { after: null, through: null }, deletion('2026-02-01'));
    expect(await records()).toEqual([{ id: uuid(1), done: false }]);
    await settleAll();
    expect(await copies()).toEqual([]);
    expect(await records()).toEqual([{ id: uuid(1), done: true }]);

    // The migration drops the key while this registry (a warm container) still thinks it keyed.
    await restore(1);
    await nxrg.pool.query('ALTER TABLE deleted_documents DROP CONSTRAINT deleted_documents_pkey');
    const failed = registry.deleteExpiredRange(rule, { after: null, through: null }, deletion('2026-03-01'));
    await expect(failed).rejects.toBeInstanceOf(DatabaseError);
    // The statement failed as a whole: the document is still there, not gone without its record.
    expect((await nxrg.pool.query('SELECT 1 FROM documents')).rows).toHaveLength(1);
    expect(await registry.deleteExpiredRange(rule, { after: null, through: null }, deletion('2026-03-01'))).toEqual([
      uuid(1),
    ]);
    expect(await records()).toEqual([
      { id: uuid(1), done: true },
      { id: uuid(1), done: false },
    ]);
  });

  it('a job that writes records refuses at cold start a unique index on document_id that a second record would violate', async () => {
    await nxrg.pool.query(
      'CREATE UNIQUE INDEX deleted_documents_once ON deleted_documents (document_id) WHERE openxds_deleted_at IS NULL',
    );
    try {
      const job = (name: typeof TIMEBASED_JOB | typeof REPOSITORY_JOB) =>
        cleanupJob(
          name,
          {
            NXRG_DOCUMENT_TYPES: 'referral',
            CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 3650 } }),
          },
          { nxrg: nxrg.pool, openxds: openxds.pool },
          silentCleanupReport,
        );
      await expect(job(TIMEBASED_JOB).verify!()).rejects.toThrow(
        /NXRG table "deleted_documents" \(NXRG_NAMES deletedDocuments\.table\) has unique index "deleted_documents_once" on "document_id", which is not a plain key/,
      );
      // The repository job writes no records: the index is no concern of it.
      await expect(job(REPOSITORY_JOB).verify!()).resolves.toBeUndefined();
      // The plain key of an earlier version is not refused: the jobs keep its upsert.
      await nxrg.pool.query(`DROP INDEX deleted_documents_once;
        ALTER TABLE deleted_documents ADD CONSTRAINT deleted_documents_pkey PRIMARY KEY (document_id)`);
      await expect(job(TIMEBASED_JOB).verify!()).resolves.toBeUndefined();
    } finally {
      await nxrg.pool.query('DROP INDEX IF EXISTS deleted_documents_once');
    }
  });

  it('runs an id-range resettle and an id-cursor recheck an earlier version left on the stack, on the appended table', async () => {
    // Done deletions 1–6, their copies 2 and 5 back in OpenXDS; 4 also restored in NXRG (kept).
    await nxrg.pool.query(
      `INSERT INTO deleted_documents (document_id, deleted_at, reason, openxds_deleted_at)
       SELECT unnest($1::uuid[]), '2026-01-01', 'x', '2026-01-02'`,
      [[1, 2, 3, 4, 5, 6].map(uuid)],
    );
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at) VALUES ($1, 'referral', '0101010101', now())`,
      [uuid(4)],
    );
    await openxds.pool.query('INSERT INTO repository_documents SELECT unnest($1::uuid[])', [[2, 4, 5].map(uuid)]);
    await leftByEarlierVersion(dynamo.doc, TABLE, REPOSITORY_JOB, {
      kind: 'resettle',
      payload: { after: uuid(1), through: uuid(5) },
    });
    await leftByEarlierVersion(dynamo.doc, TABLE, REPOSITORY_JOB, {
      kind: 'recheck',
      payload: { after: uuid(3) },
    });
    const steps = await settleAll();
    expect(steps).not.toHaveProperty('failed');
    expect(await copies()).toEqual([{ id: uuid(4) }]);
    const marked = await nxrg.pool.query<{ id: string }>(
      `SELECT document_id::text AS id FROM deleted_documents WHERE openxds_deleted_at > '2026-01-02' ORDER BY 1`,
    );
    expect(marked.rows.map((r) => r.id)).toEqual([uuid(2), uuid(5)]);
  });
});
