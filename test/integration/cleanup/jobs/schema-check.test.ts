import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { TIMEBASED_JOB } from '../../../../lib/cleanup/jobs/timebased';
import { defaultNxrgNames } from '../../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import { createStepRunner } from '../../../../lib/cleanup/step-runner';
import { cleanupJob, loadStepSettings } from '../../../../lib/wiring/cleanup';
import { silentCleanupReport as report } from '../../../harness/cleanup-report';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

/**
 * Issue 12, item 8: before its first delete a job checks that the tables and columns it will touch
 * exist with the expected types, and refuses to run otherwise. A `created_at` kept as Danish date
 * text ("01.01.2099") compared as text with the cutoff, so a document of 2099 looked expired.
 */
describe('cleanup jobs check the tables and columns they touch (real PostgreSQL)', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;
  const now = new Date('2026-06-01T00:00:00Z');

  beforeAll(async () => {
    [dynamo, nxrg, openxds] = await Promise.all([startDynamo(), createTestSchema(), createTestSchema()]);
    await dynamo.createTables();
    await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
    await nxrg.pool.query(`ALTER TABLE documents ALTER COLUMN created_at TYPE text`);
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at) VALUES
        (gen_random_uuid(), 'referral', '0101010101', '01.01.2099'),
        (gen_random_uuid(), 'referral', '0101010101', '31.12.2098')`,
    );
    // OpenXDS has no repository table at all.
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop(), openxds?.drop()]);
  });

  const config = loadStepSettings(
    {
      CLEANUP_TABLE: 'CleanupStackTable',
      NXRG_DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
      OPENXDS_DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
    },
    { stepsPerInvocation: 100 },
  );
  const core = (name: typeof TIMEBASED_JOB | typeof REPOSITORY_JOB) =>
    createStepRunner(
      cleanupJob(
        name,
        {
          NXRG_DOCUMENT_TYPES: 'referral',
          CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 3650 } }),
        },
        { nxrg: nxrg.pool, openxds: openxds.pool },
        report,
      ),
      config,
      { doc: dynamo.doc, report, clock: () => now.getTime() },
    );

  it('refuses to run the time-based job on a time column that is text, and deletes nothing', async () => {
    const run = core(TIMEBASED_JOB);
    for (let invocation = 0; invocation < 3; invocation++) {
      await run().catch((error: Error) => {
        expect(error.name).toBe('ConfigError');
        expect(error.message).toMatch(
          /NXRG column "documents"\."created_at" \(NXRG_NAMES documents\.createdAt\) is text; expected a timestamp/,
        );
      });
    }
    const { rows } = await nxrg.pool.query('SELECT count(*)::int AS n FROM documents');
    expect(rows[0].n).toBe(2);
    await expect(run()).rejects.toThrow(/ConfigError|created_at/);
  });

  it('refuses to run the repository job when the OpenXDS table does not exist, naming it', async () => {
    await expect(core(REPOSITORY_JOB)()).rejects.toThrow(
      /OpenXDS table "repository_documents" \(OPENXDS_NAMES documents\.table\) does not exist/,
    );
  });
});
