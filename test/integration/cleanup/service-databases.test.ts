import { Client } from 'pg';
import { type EngineTuning, loadCleanupConfig } from '../../../lib/cleanup/config';
import { TIMEBASED_JOB } from '../../../lib/cleanup/jobs/timebased';
import { defaultNxrgNames } from '../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../lib/cleanup/nxrg/schema';
import { createStepRunner } from '../../../lib/cleanup/step-runner';
import { cleanupJob, databaseSettings, jobDatabases, stepSettings } from '../../../lib/wiring/cleanup';
import { silentCleanupReport as report } from '../../harness/cleanup-report';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../harness/postgres';

/**
 * Issue 12, item 10: the PostgreSQL clients end a hung statement before the Lambda timeout, and a
 * database error names the database and its setting, never the password.
 */
describe('cleanup database clients (real PostgreSQL)', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  const now = new Date('2026-06-01T00:00:00Z');
  const jobEnv = {
    NXRG_DOCUMENT_TYPES: 'referral',
    CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 3650 } }),
  };

  beforeAll(async () => {
    [dynamo, nxrg] = await Promise.all([startDynamo(), createTestSchema()]);
    await dynamo.createTables();
    await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       VALUES (gen_random_uuid(), 'referral', '0101010101', '2000-01-01')`,
    );
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop()]);
  });

  /** The time-based job's core on `nxrgUrl`, as the function builds it. */
  function core(nxrgUrl: string, stack: string, tuning: Partial<EngineTuning> = {}) {
    const config = loadCleanupConfig(
      { CLEANUP_TABLE: 'CleanupStackTable', NXRG_DATABASE_URL: nxrgUrl, OPENXDS_DATABASE_URL: nxrg.url },
      { maxAttempts: 100, ...tuning },
    );
    const databases = jobDatabases(databaseSettings(config), report);
    const job = { ...cleanupJob(TIMEBASED_JOB, jobEnv, databases, report), name: stack };
    const run = createStepRunner(job, stepSettings(config), { doc: dynamo.doc, report, clock: () => now.getTime() });
    return { run, end: () => Promise.all([databases.nxrg.end(), databases.openxds.end()]) };
  }

  it('ends a step whose statement waits on a lock, within the database timeout', async () => {
    const locker = new Client({ connectionString: nxrg.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE documents IN ACCESS EXCLUSIVE MODE');
    const { run, end } = core(nxrg.url, 'hung-step', { databaseTimeoutMs: 1_000 });
    try {
      const [fill] = await run();
      expect(fill).toMatchObject({ fill: true });
      const outcome = await Promise.race([
        run(),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 8_000)),
      ]);
      expect(outcome).toEqual([
        expect.objectContaining({ outcome: 'failed', error: expect.stringMatching(/timeout/i) }),
      ]);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await end();
    }
  }, 30_000);

  it('names the database and the setting in a database error, never the password', async () => {
    const url = new URL(nxrg.url);
    url.password = 'hunter2-secret';
    url.pathname = '/no_such_database';
    const { run, end } = core(url.toString(), 'unreachable');
    try {
      // The job's schema check, before any step, is the first to reach the database.
      const error = await run().then(
        () => undefined,
        (caught: Error) => caught,
      );
      expect(error?.message).toMatch(/^NXRG database \(NXRG_DATABASE_URL\): .*no_such_database/);
      expect(error?.message).not.toContain('hunter2');
    } finally {
      await end();
    }
  });
});
