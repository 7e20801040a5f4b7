import { cleanupJobNames } from '../../../../lib/cleanup/jobs';
import { STATUS90_JOB } from '../../../../lib/cleanup/jobs/status90';
import { TIMEBASED_JOB } from '../../../../lib/cleanup/jobs/timebased';
import { nxrgNamesSchema } from '../../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import { openxdsNamesSchema } from '../../../../lib/cleanup/openxds/names';
import { openxdsSchemaSql } from '../../../../lib/cleanup/openxds/schema';
import type { CleanupReport, DeletionEvent } from '../../../../lib/cleanup/report';
import { createStepRunner } from '../../../../lib/cleanup/step-runner';
import { cleanupJob, loadStepSettings } from '../../../../lib/wiring/cleanup';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

// An existing registry with its own table and column names: the jobs work on it through configuration alone.
describe('cleanup jobs on an existing database with its own table and column names', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;
  const NXRG_NAMES = {
    documents: {
      table: 'dokument',
      id: 'dok_id',
      type: 'dok_type',
      citizenId: 'cpr_nr',
      createdAt: 'oprettet',
      serviceTime: 'ydelse',
    },
    citizens: { table: 'borger', cpr: 'cpr_nr', status: 'cpr_status' },
    deletedDocuments: {
      table: 'slettet_dokument',
      documentId: 'dok_id',
      deletedAt: 'slettet',
      reason: 'aarsag',
      openxdsDeletedAt: 'xds_slettet',
    },
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
    await openxds.pool.query(
      `INSERT INTO xds_dokument SELECT ('00000000-0000-0000-0000-00000000000' || n)::uuid FROM generate_series(1, 4) n`,
    );
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop(), openxds?.drop()]);
  });

  it('deletes the expired and the deceased citizens’ documents in NXRG, then in OpenXDS, through the functions’ core', async () => {
    const env = {
      NXRG_NAMES: JSON.stringify(NXRG_NAMES),
      OPENXDS_NAMES: JSON.stringify(OPENXDS_NAMES),
      NXRG_DOCUMENT_TYPES: 'henvisning,epikrise',
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ henvisning: { retentionDays: 3650 } }),
    };
    const events: DeletionEvent[] = [];
    const report: CleanupReport = {
      deleted: (e) => events.push(e),
      dropped: () => undefined,
      stepped: () => undefined,
      stepFailed: () => undefined,
      connectionFailed: () => undefined,
    };
    const databases = { nxrg: nxrg.pool, openxds: openxds.pool };
    const config = loadStepSettings(
      { CLEANUP_TABLE: 'CleanupStackTable', NXRG_DATABASE_URL: nxrg.url, OPENXDS_DATABASE_URL: openxds.url },
      { stepsPerInvocation: 1000 },
    );
    for (const job of cleanupJobNames) {
      // The functions' own core: the first invocation fills the stack, the second steps it empty and refills.
      const core = createStepRunner(cleanupJob(job, env, databases, report), config, {
        doc: dynamo.doc,
        report,
        clock: () => now.getTime(),
      });
      const [fill] = await core();
      expect(fill).toMatchObject({ fill: true, outcome: 'supplied' });
      const steps = await core();
      expect(steps.at(-1)).toMatchObject({ fill: true });
      expect(steps.filter((s) => s.outcome === 'failed' || s.outcome === 'dead-lettered')).toEqual([]);
    }
    expect(events.map((e) => [e.job, e.documentIds])).toEqual(
      expect.arrayContaining([
        [TIMEBASED_JOB, ['00000000-0000-0000-0000-000000000001']],
        [STATUS90_JOB, ['00000000-0000-0000-0000-000000000003']],
      ]),
    );
    const left = await nxrg.pool.query('SELECT dok_id::text AS id FROM dokument ORDER BY 1');
    expect(left.rows.map((r) => r.id)).toEqual([
      '00000000-0000-0000-0000-000000000002',
      '00000000-0000-0000-0000-000000000004',
    ]);
    const stored = await openxds.pool.query('SELECT xds_id::text AS id FROM xds_dokument ORDER BY 1');
    expect(stored.rows.map((r) => r.id)).toEqual(left.rows.map((r) => r.id));
    const records = await nxrg.pool.query(
      'SELECT aarsag, xds_slettet IS NOT NULL AS done FROM slettet_dokument ORDER BY dok_id',
    );
    expect(records.rows).toEqual([
      { aarsag: TIMEBASED_JOB, done: true },
      { aarsag: STATUS90_JOB, done: true },
    ]);
  });
});
