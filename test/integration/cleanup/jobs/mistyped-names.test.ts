import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { TIMEBASED_JOB } from '../../../../lib/cleanup/jobs/timebased';
import { defaultNxrgNames, nxrgNamesSchema } from '../../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import { createStepRunner } from '../../../../lib/cleanup/step-runner';
import { cleanupJob, loadStepSettings } from '../../../../lib/wiring/cleanup';
import { silentCleanupReport as report } from '../../../harness/cleanup-report';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

/**
 * Issue 12, item 8: a mistyped key in NXRG_NAMES was ignored and the job fell back to the default
 * table: with the registry in `dokument` and `{"documents":{"tabel":"dokument"}}`, the time-based
 * job deleted the old rows of an unrelated `documents` table. Unknown keys now stop the cold start.
 */
describe('a mistyped NXRG_NAMES / OPENXDS_NAMES key (real PostgreSQL)', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  const now = new Date('2026-06-01T00:00:00Z');

  beforeAll(async () => {
    [dynamo, nxrg] = await Promise.all([startDynamo(), createTestSchema()]);
    await dynamo.createTables();
    // The registry lives in `dokument`; `documents` (the default name) is somebody else's table.
    await nxrg.pool.query(nxrgSchemaSql(nxrgNamesSchema.parse({ documents: { table: 'dokument' } })));
    await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       SELECT gen_random_uuid(), 'referral', '0101010101', '2000-01-01' FROM generate_series(1, 3)`,
    );
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop()]);
  });

  const env = {
    NXRG_NAMES: JSON.stringify({ documents: { tabel: 'dokument' } }),
    NXRG_DOCUMENT_TYPES: 'referral',
    CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 3650 } }),
  };

  it('stops the job at cold start naming the key, and the unrelated table keeps its rows', async () => {
    let coldStart: unknown;
    try {
      const job = cleanupJob(TIMEBASED_JOB, env, { nxrg: nxrg.pool, openxds: nxrg.pool }, report);
      // What the old code went on to do: three invocations of the function.
      const config = loadStepSettings({
        CLEANUP_TABLE: 'CleanupStackTable',
        NXRG_DATABASE_URL: nxrg.url,
        OPENXDS_DATABASE_URL: nxrg.url,
        CLEANUP_DRY_RUN: 'false',
      });
      const core = createStepRunner(job, config, { doc: dynamo.doc, report, clock: () => now.getTime() });
      for (let i = 0; i < 3; i++) await core();
    } catch (error) {
      coldStart = error;
    }
    const { rows } = await nxrg.pool.query('SELECT count(*)::int AS n FROM documents');
    expect(rows[0].n).toBe(3);
    expect((coldStart as Error).name).toBe('ConfigError');
    expect((coldStart as Error).message).toContain('NXRG_NAMES.documents.tabel: is not a known key');
  });

  it('names an unknown key of OPENXDS_NAMES and a top-level one of NXRG_NAMES', () => {
    expect(() =>
      cleanupJob(
        REPOSITORY_JOB,
        {
          NXRG_NAMES: JSON.stringify({ document: { table: 'dokument' } }),
          OPENXDS_NAMES: JSON.stringify({ documents: { idd: 'xds_id' } }),
        },
        { nxrg: nxrg.pool, openxds: nxrg.pool },
        report,
      ),
    ).toThrow(/NXRG_NAMES\.document: is not a known key.*OPENXDS_NAMES\.documents\.idd: is not a known key/);
  });
});
