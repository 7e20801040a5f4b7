import type { DeletionEvent } from '../../../../lib/cleanup/jobs/deletions';
import { cleanupJobs } from '../../../../lib/cleanup/jobs/registry';
import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { STATUS90_JOB } from '../../../../lib/cleanup/jobs/status90';
import { TIMEBASED_JOB } from '../../../../lib/cleanup/jobs/timebased';
import { nxrgNamesSchema } from '../../../../lib/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/nxrg/schema';
import { openxdsNamesSchema } from '../../../../lib/openxds/names';
import { openxdsSchemaSql } from '../../../../lib/openxds/schema';
import { startDynamo, type EmbeddedDynamo } from '../../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';
import { stepToEmpty } from '../../../harness/registry/step-to-empty';

// An existing registry with its own table and column names: the jobs work on it through configuration alone.
describe('cleanup jobs on an existing database with its own table and column names', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;
  const NXRG_NAMES = {
    documents: { table: 'dokument', id: 'dok_id', type: 'dok_type', citizenId: 'cpr_nr', createdAt: 'oprettet', serviceTime: 'ydelse' },
    citizens: { table: 'borger', cpr: 'cpr_nr', status: 'cpr_status' },
    deletedDocuments: { table: 'slettet_dokument', documentId: 'dok_id', deletedAt: 'slettet', reason: 'aarsag', openxdsDeletedAt: 'xds_slettet' },
  };
  const OPENXDS_NAMES = { documents: { table: 'xds_dokument', id: 'xds_id' } };
  const now = new Date('2026-06-01T00:00:00Z');

  beforeAll(async () => {
    [dynamo, nxrg, openxds] = await Promise.all([startDynamo(), createTestSchema(), createTestSchema()]);
    await dynamo.createTables();
    // Qualify the names with the schemas, as a deployment whose tables live outside search_path would.
    NXRG_NAMES.documents.table = `${nxrg.schema}.dokument`;
    await nxrg.pool.query(nxrgSchemaSql(nxrgNamesSchema.parse(NXRG_NAMES)));
    await openxds.pool.query(openxdsSchemaSql(openxdsNamesSchema.parse(OPENXDS_NAMES)));
    await nxrg.pool.query(`INSERT INTO borger VALUES ('1111111111', 90), ('2222222222', 1)`);
    await nxrg.pool.query(
      `INSERT INTO dokument (dok_id, dok_type, cpr_nr, oprettet) VALUES
        ('00000000-0000-0000-0000-000000000001', 'henvisning', '2222222222', '2000-01-01'),
        ('00000000-0000-0000-0000-000000000002', 'henvisning', '2222222222', '2026-01-01'),
        ('00000000-0000-0000-0000-000000000003', 'epikrise', '1111111111', '2026-01-01'),
        ('00000000-0000-0000-0000-000000000004', 'epikrise', '2222222222', '2026-01-01')`,
    );
    await openxds.pool.query(`INSERT INTO xds_dokument SELECT ('00000000-0000-0000-0000-00000000000' || n)::uuid FROM generate_series(1, 4) n`);
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop(), openxds?.drop()]);
  });

  it('deletes the expired and the deceased citizens’ documents in NXRG, then in OpenXDS', async () => {
    const env = {
      NXRG_NAMES: JSON.stringify(NXRG_NAMES),
      OPENXDS_NAMES: JSON.stringify(OPENXDS_NAMES),
      NXRG_DOCUMENT_TYPES: 'henvisning,epikrise',
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ henvisning: { retentionDays: 3650 } }),
    };
    const events: DeletionEvent[] = [];
    const report = { record: (e: DeletionEvent) => events.push(e) };
    const databases = { nxrg: nxrg.pool, openxds: openxds.pool };
    for (const job of [TIMEBASED_JOB, STATUS90_JOB, REPOSITORY_JOB]) {
      await stepToEmpty(cleanupJobs[job]!(env, databases, report), {
        doc: dynamo.doc,
        table: 'CleanupStackTable',
        dryRun: false,
        now,
        steppers: 1,
      });
    }
    expect(events.map((e) => [e.job, e.documentIds])).toEqual(
      expect.arrayContaining([
        [TIMEBASED_JOB, ['00000000-0000-0000-0000-000000000001']],
        [STATUS90_JOB, ['00000000-0000-0000-0000-000000000003']],
      ]),
    );
    const left = await nxrg.pool.query('SELECT dok_id::text AS id FROM dokument ORDER BY 1');
    expect(left.rows.map((r) => r.id)).toEqual(['00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000004']);
    const stored = await openxds.pool.query('SELECT xds_id::text AS id FROM xds_dokument ORDER BY 1');
    expect(stored.rows.map((r) => r.id)).toEqual(left.rows.map((r) => r.id));
    const records = await nxrg.pool.query('SELECT aarsag, xds_slettet IS NOT NULL AS done FROM slettet_dokument ORDER BY dok_id');
    expect(records.rows).toEqual([
      { aarsag: TIMEBASED_JOB, done: true },
      { aarsag: STATUS90_JOB, done: true },
    ]);
  });
});
