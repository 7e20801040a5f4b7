import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { createStepRunner } from '../../../../lib/cleanup/step-runner';
import { cleanupJob, loadStepSettings } from '../../../../lib/wiring/cleanup';
import { silentCleanupReport as report } from '../../../harness/cleanup-report';
import { type CleanupStores, startCleanupStores } from '../../../harness/cleanup-stores';
import type { EmbeddedDynamo } from '../../../harness/dynamo';
import type { TestSchema } from '../../../harness/postgres';

const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/**
 * Issue 12, item 9: a document deleted from the registry must not stay in the repository (seed
 * 001: the repository cleanup fetches the documents deleted in NXRG "that are not yet deleted in
 * OpenXDS"). A copy that came back into OpenXDS after its deletion record was marked done (a
 * restore, a re-upload) was never deleted again: the job trusted the mark, not OpenXDS.
 */
describe('repository-cleanup and copies that re-appeared in OpenXDS (real PostgreSQL)', () => {
  let stores: CleanupStores;
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;

  beforeAll(async () => {
    stores = await startCleanupStores();
    ({ dynamo, nxrg, openxds } = stores);
    // 1: done long ago, and back in OpenXDS. 2: done, and gone from OpenXDS. 3: done, but restored
    // in NXRG as well (the registry holds it again, so OpenXDS may too). 4: pending, as usual.
    await nxrg.pool.query(
      `INSERT INTO deleted_documents (document_id, deleted_at, reason, openxds_deleted_at) VALUES
        ($1, '2020-01-01', 'registry-timebased-cleanup', '2020-01-02'),
        ($2, '2020-01-01', 'registry-timebased-cleanup', '2020-01-02'),
        ($3, '2020-01-01', 'registry-status90-cleanup', '2020-01-02'),
        ($4, '2026-01-01', 'registry-status90-cleanup', NULL)`,
      [uuid(1), uuid(2), uuid(3), uuid(4)],
    );
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at) VALUES ($1, 'referral', '0101010101', '2020-01-01')`,
      [uuid(3)],
    );
    await openxds.pool.query('INSERT INTO repository_documents SELECT unnest($1::uuid[])', [[1, 3, 4, 5].map(uuid)]);
  });
  afterAll(() => stores?.stop());

  it('deletes a re-appeared copy, keeps what NXRG holds again, and marks every deletion done', async () => {
    const config = loadStepSettings(
      { CLEANUP_TABLE: 'CleanupStackTable', NXRG_DATABASE_URL: nxrg.url, OPENXDS_DATABASE_URL: openxds.url },
      { stepsPerInvocation: 100 },
    );
    const job = cleanupJob(REPOSITORY_JOB, {}, { nxrg: nxrg.pool, openxds: openxds.pool }, report, {
      repositoryPageSize: 2,
      repositoryBatchSize: 1,
    });
    const runSteps = createStepRunner(job, config, { doc: dynamo.doc, report });
    // The first invocation fills the stack; the next ones step it until the fill comes round again.
    await runSteps();
    for (let invocation = 0; invocation < 20; invocation++) {
      const steps = await runSteps();
      if (steps.some((s) => s.fill)) break;
    }
    const stored = await openxds.pool.query<{ id: string }>(
      'SELECT document_id::text AS id FROM repository_documents ORDER BY 1',
    );
    expect(stored.rows.map((r) => r.id)).toEqual([uuid(3), uuid(5)]);
    const pending = await nxrg.pool.query('SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL');
    expect(pending.rows).toHaveLength(0);
  });
});
