import { Client } from 'pg';
import type { JobDefinition, Operation, OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { repositoryJob } from '../../../../lib/cleanup/jobs/repository';
import { defaultNxrgNames } from '../../../../lib/cleanup/nxrg/names';
import { RepositoryDeletions } from '../../../../lib/cleanup/nxrg/repository-deletions';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import { defaultOpenxdsNames } from '../../../../lib/cleanup/openxds/names';
import { OpenxdsRepository } from '../../../../lib/cleanup/openxds/repository';
import { openxdsSchemaSql } from '../../../../lib/cleanup/openxds/schema';
import type { DeletionEvent, JobReport } from '../../../../lib/cleanup/report';
import { noMarks } from '../../../harness/cleanup-job-marks';
import { eventually } from '../../../harness/eventually';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

const context: OperationContext = { job: 'test', dryRun: false, now: () => new Date(), marks: noMarks };
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;
const RESTORED = uuid(1);
const STILL_DELETED = uuid(2);

async function run(job: JobDefinition, op: Operation): Promise<Operation[]> {
  const kind = job.kinds[op.kind]!;
  return (await kind.execute(kind.payload.parse(op.payload), context)) ?? [];
}

/**
 * Issue 23, item 4: deleting is irreversible, so the OpenXDS copy of a document that is back in NXRG
 * must never be deleted. The settle checked NXRG, then its OpenXDS delete waited on a row lock; a
 * restore in NXRG meanwhile was not seen, and the copy went once the lock was released.
 */
describe('repository-cleanup and a document restored in NXRG while its OpenXDS delete waits (real PostgreSQL)', () => {
  let nxrg: TestSchema;
  let openxds: TestSchema;
  const events: DeletionEvent[] = [];
  const report: JobReport = { deleted: (e) => events.push(e), dropped: () => undefined };

  beforeAll(async () => {
    [nxrg, openxds] = await Promise.all([createTestSchema(), createTestSchema()]);
    await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
    await openxds.pool.query(openxdsSchemaSql(defaultOpenxdsNames));
  });
  afterAll(async () => {
    await Promise.all([nxrg?.drop(), openxds?.drop()]);
  });

  it('keeps the copy of a document restored between the check and the delete, and deletes the others', async () => {
    await nxrg.pool.query(
      `INSERT INTO deleted_documents (document_id, deleted_at, reason) VALUES ($1, now(), 'x'), ($2, now(), 'x')`,
      [RESTORED, STILL_DELETED],
    );
    await openxds.pool.query('INSERT INTO repository_documents SELECT unnest($1::uuid[])', [[RESTORED, STILL_DELETED]]);
    const job = repositoryJob({
      config: { pageSize: 100, batchSize: 100, maxDeletesPerStep: 100, recheckIntervalMinutes: 60 },
      registry: new RepositoryDeletions(nxrg.pool, defaultNxrgNames),
      repository: new OpenxdsRepository(openxds.pool, defaultOpenxdsNames),
      report,
    });
    const [settle] = (await run(job, job.defaultOperation)).filter((op) => op.kind === 'settle');

    // Another OpenXDS session holds the restored document's row.
    const holder = new Client({ connectionString: openxds.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM repository_documents WHERE document_id = $1 FOR UPDATE', [RESTORED]);
      const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const holderPid = rows[0]!.pid;

      const settling = run(job, settle!);
      // The settle has checked NXRG and now waits on the held row in OpenXDS.
      await eventually(async () => {
        const { rows: waiting } = await openxds.pool.query(
          'SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [holderPid],
        );
        return waiting.length > 0 ? true : undefined;
      }, 'the settle to wait on the held OpenXDS row');
      // Meanwhile the document is restored in NXRG (its row is back), and committed.
      await nxrg.pool.query(
        `INSERT INTO documents (id, document_type, citizen_id, created_at) VALUES ($1, 'referral', '0101010101', now())`,
        [RESTORED],
      );
      await holder.query('ROLLBACK');
      await settling;
    } finally {
      await holder.end();
    }

    const stored = await openxds.pool.query<{ id: string }>('SELECT document_id::text AS id FROM repository_documents');
    expect(stored.rows.map((r) => r.id)).toEqual([RESTORED]);
    expect(events.flatMap((e) => e.documentIds)).toEqual([STILL_DELETED]);
    // The restored document's deletion stays pending: its copy was not deleted.
    const pending = await nxrg.pool.query<{ id: string }>(
      'SELECT document_id::text AS id FROM deleted_documents WHERE openxds_deleted_at IS NULL',
    );
    expect(pending.rows).toEqual([{ id: RESTORED }]);
  });
});
