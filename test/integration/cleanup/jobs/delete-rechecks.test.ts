import { Client } from 'pg';
import type { JobDefinition, Operation, OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { repositoryJob } from '../../../../lib/cleanup/jobs/repository';
import { status90Job } from '../../../../lib/cleanup/jobs/status90';
import { timebasedJob } from '../../../../lib/cleanup/jobs/timebased';
import { defaultNxrgNames } from '../../../../lib/cleanup/nxrg/names';
import { RepositoryDeletions } from '../../../../lib/cleanup/nxrg/repository-deletions';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import { type DeceasedCursor, DeceasedDocuments } from '../../../../lib/cleanup/nxrg/status90';
import { ExpiredDocuments } from '../../../../lib/cleanup/nxrg/timebased';
import { defaultOpenxdsNames } from '../../../../lib/cleanup/openxds/names';
import { OpenxdsRepository } from '../../../../lib/cleanup/openxds/repository';
import { openxdsSchemaSql } from '../../../../lib/cleanup/openxds/schema';
import type { DeletionEvent, JobReport } from '../../../../lib/cleanup/report';
import { noMarks } from '../../../harness/cleanup-job-marks';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

const NOW = new Date('2026-06-01T00:00:00Z');
const context: OperationContext = { job: 'test', dryRun: false, now: () => NOW, marks: noMarks };
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/** Executes one operation of `job` and returns what it supplies. */
async function run(job: JobDefinition, op: Operation, ctx = context): Promise<Operation[]> {
  const kind = job.kinds[op.kind]!;
  return (await kind.execute(kind.payload.parse(op.payload), ctx)) ?? [];
}

/** Runs every operation `job` supplies, from its default operation, until none is left. */
async function runAll(job: JobDefinition, ctx = context): Promise<void> {
  const pending = [job.defaultOperation];
  while (pending.length > 0) pending.push(...(await run(job, pending.pop()!, ctx)));
}

// SPEC §4: "a delete re-checks its condition at delete time". These change the data between the
// supplier that chose a document and the batch delete, and check that the delete honours the change.
describe('deletes re-check their condition at delete time', () => {
  let nxrg: TestSchema;
  let openxds: TestSchema;
  let expired: ExpiredDocuments;
  let deceased: DeceasedDocuments;
  let deletions: RepositoryDeletions;
  const events: DeletionEvent[] = [];
  const report: JobReport = { deleted: (e) => events.push(e), dropped: () => undefined };
  const docIds = async () =>
    (await nxrg.pool.query<{ id: string }>('SELECT id::text AS id FROM documents ORDER BY id')).rows.map((r) => r.id);

  beforeAll(async () => {
    [nxrg, openxds] = await Promise.all([createTestSchema(), createTestSchema()]);
    await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
    await openxds.pool.query(openxdsSchemaSql(defaultOpenxdsNames));
    expired = new ExpiredDocuments(nxrg.pool, defaultNxrgNames);
    deceased = new DeceasedDocuments(nxrg.pool, defaultNxrgNames);
    deletions = new RepositoryDeletions(nxrg.pool, defaultNxrgNames);
  });
  afterAll(async () => {
    await Promise.all([nxrg?.drop(), openxds?.drop()]);
  });
  beforeEach(async () => {
    events.splice(0);
    await nxrg.pool.query('TRUNCATE documents, citizens, deleted_documents');
    await openxds.pool.query('TRUNCATE repository_documents');
  });

  const insertDocs = (rows: [number, string, string, string][]) =>
    nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[])`,
      [rows.map((r) => uuid(r[0])), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
    );

  describe('registry-status90-cleanup', () => {
    /** The range ends the job read for the citizens ending in 1, in order. */
    const ends: (DeceasedCursor | null)[] = [];
    /**
     * The job on the real registry, with `change` run once right after the first range end of the
     * citizens ending in 1 is read, before that range's delete: ranges of two documents, so citizen
     * 0101010001's two fill one.
     */
    const job = (change: () => Promise<unknown> = async () => undefined) => {
      let changed = false;
      return status90Job({
        config: { suffixPageSize: 100, citizenBatchSize: 10, batchSize: 2, maxDeletesPerStep: 100 },
        registry: {
          citizenPage: (...args) => deceased.citizenPage(...args),
          deleteDeceasedRange: (...args) => deceased.deleteDeceasedRange(...args),
          deleteOfDeceased: (...args) => deceased.deleteOfDeceased(...args),
          async deceasedRangeEnd(...args) {
            const end = await deceased.deceasedRangeEnd(...args);
            if (args[0].digit !== '1') return end;
            ends.push(end);
            if (!changed) {
              changed = true;
              await change();
            }
            return end;
          },
        },
        report,
      });
    };

    beforeEach(async () => {
      ends.splice(0);
      await nxrg.pool.query(`INSERT INTO citizens VALUES ('0101010001', 90), ('0202020002', 90), ('0303030003', 1)`);
      await insertDocs([
        [1, 'referral', '0101010001', '2020-01-01'],
        [2, 'referral', '0101010001', '2021-01-01'],
        [3, 'referral', '0202020002', '2020-01-01'],
        [4, 'referral', '0303030003', '2020-01-01'],
      ]);
    });

    it('keeps every document of a citizen who is no longer status 90 when the delete runs', async () => {
      await runAll(job(() => nxrg.pool.query(`UPDATE citizens SET status = 1 WHERE cpr = '0101010001'`)));
      // The first range was read while 0101010001 was still deceased, and holds both their documents.
      expect(ends[0]).toEqual({ citizen: '0101010001', id: uuid(2) });
      expect(await docIds()).toEqual([uuid(1), uuid(2), uuid(4)]);
      const { rows } = await nxrg.pool.query('SELECT document_id::text AS id FROM deleted_documents');
      expect(rows).toEqual([{ id: uuid(3) }]);
    });

    it('waits for a status change in flight and then keeps the documents (the citizen row is locked by the delete)', async () => {
      const other = new Client({ connectionString: nxrg.url });
      await other.connect();
      let committed: Promise<unknown> = Promise.resolve();
      try {
        // Between the range end and its delete, another transaction changes the status and commits
        // only later: the delete must wait for it and then see the new status.
        await runAll(
          job(async () => {
            await other.query('BEGIN');
            await other.query(`UPDATE citizens SET status = 1 WHERE cpr = '0101010001'`);
            committed = new Promise((resolve) => setTimeout(resolve, 200)).then(() => other.query('COMMIT'));
          }),
        );
        await committed;
      } finally {
        await other.end();
      }
      expect(ends[0]).toEqual({ citizen: '0101010001', id: uuid(2) });
      expect(await docIds()).toEqual([uuid(1), uuid(2), uuid(4)]);
    });

    it('two steps running the same citizen batch at once delete, record and report each document once', async () => {
      await insertDocs(Array.from({ length: 40 }, (_, i) => [i + 10, 'referral', '0101010001', '2020-01-01']));
      const batch = {
        kind: 'citizen-batch',
        payload: { digit: '1', after: null, through: '0101010001', documentsAfter: null },
      };
      await Promise.all([run(job(), batch), run(job(), batch), run(job(), batch)]);
      const all = [1, 2, ...Array.from({ length: 40 }, (_, i) => i + 10)].map(uuid).sort();
      expect(events.flatMap((e) => e.documentIds).sort()).toEqual(all);
      const { rows } = await nxrg.pool.query<{ id: string }>(
        'SELECT document_id::text AS id FROM deleted_documents ORDER BY 1',
      );
      expect(rows.map((r) => r.id)).toEqual(all);
      expect(await docIds()).toEqual([uuid(3), uuid(4)]);
    });

    it('counts in a dry run and deletes nothing', async () => {
      await runAll(job(), { ...context, dryRun: true });
      expect(events.flatMap((e) => e.documentIds).sort()).toEqual([uuid(1), uuid(2), uuid(3)]);
      expect(events.every((e) => e.dryRun)).toBe(true);
      expect(await docIds()).toEqual([uuid(1), uuid(2), uuid(3), uuid(4)]);
      expect((await nxrg.pool.query('SELECT 1 FROM deleted_documents')).rows).toHaveLength(0);
    });
  });

  describe('registry-timebased-cleanup (keyset range deletes)', () => {
    const referral = { documentType: 'referral', retentionDays: 365, basis: 'created' as const, batchSize: 2 };
    const cutoff = new Date(NOW.getTime() - 365 * 86_400_000);
    const rule = { documentType: 'referral', basis: 'created' as const, cutoff };
    const deletion = { reason: 'test', at: NOW, dryRun: false };
    const job = () =>
      timebasedJob({ config: { documentTypes: [referral], maxDeletesPerStep: 100 }, registry: expired, report });
    const typeBased = { kind: 'type-based', payload: { documentType: 'referral', after: null } };
    const recorded = async () =>
      (
        await nxrg.pool.query<{ id: string }>('SELECT document_id::text AS id FROM deleted_documents ORDER BY 1')
      ).rows.map((r) => r.id);

    it('deletes strictly older than now − retention: a document exactly at the cutoff stays', async () => {
      const justBefore = new Date(cutoff.getTime() - 1).toISOString();
      await insertDocs([
        [1, 'referral', '0101010001', justBefore],
        [2, 'referral', '0101010001', cutoff.toISOString()],
        [3, 'referral', '0101010001', '2020-01-01'],
        [4, 'prescription', '0101010001', '2020-01-01'],
      ]);
      expect(await run(job(), typeBased)).toEqual([]);
      expect(await docIds()).toEqual([uuid(2), uuid(4)]);
      expect(await recorded()).toEqual([uuid(1), uuid(3)]);
    });

    it('keeps a document whose time or type changed after its range was chosen', async () => {
      await insertDocs([
        [1, 'referral', '0101010001', '2020-01-01'],
        [2, 'referral', '0101010001', '2020-01-02'],
        [3, 'referral', '0101010001', '2020-01-03'],
        [4, 'referral', '0101010001', '2026-05-01'],
      ]);
      const through = await expired.expiredRangeEnd(rule, null, 3);
      expect(through?.id).toBe(uuid(3));
      await nxrg.pool.query(`UPDATE documents SET created_at = '2026-01-01' WHERE id = $1`, [uuid(1)]);
      await nxrg.pool.query(`UPDATE documents SET document_type = 'prescription' WHERE id = $1`, [uuid(2)]);
      expect(await expired.deleteExpiredRange(rule, { after: null, through }, deletion)).toEqual([uuid(3)]);
      expect(await docIds()).toEqual([uuid(1), uuid(2), uuid(4)]);
      expect(await recorded()).toEqual([uuid(3)]);
    });

    it('waits for a change in flight and then keeps the document (the DELETE re-checks the committed row)', async () => {
      await insertDocs([
        [1, 'referral', '0101010001', '2020-01-01'],
        [2, 'referral', '0101010001', '2020-01-02'],
      ]);
      const other = new Client({ connectionString: nxrg.url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`UPDATE documents SET created_at = '2026-05-01' WHERE id = $1`, [uuid(1)]);
        const deleting = expired.deleteExpiredRange(rule, { after: null, through: null }, deletion);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await other.query('COMMIT');
        expect(await deleting).toEqual([uuid(2)]);
      } finally {
        await other.end();
      }
      expect(await docIds()).toEqual([uuid(1)]);
      expect(await recorded()).toEqual([uuid(2)]);
    });

    it('two steps running the same range at once delete, record and report each document once', async () => {
      await insertDocs(
        Array.from(
          { length: 40 },
          (_, i) =>
            [i + 1, 'referral', '0101010001', `2020-01-${String((i % 28) + 1).padStart(2, '0')}`] as [
              number,
              string,
              string,
              string,
            ],
        ),
      );
      await Promise.all([run(job(), typeBased), run(job(), typeBased), run(job(), typeBased)]);
      const reported = events.flatMap((e) => e.documentIds).sort();
      const all = Array.from({ length: 40 }, (_, i) => uuid(i + 1));
      expect(reported).toEqual(all);
      expect(await recorded()).toEqual(all);
      expect(await docIds()).toEqual([]);
    });

    it('counts in a dry run, walking every range, and deletes nothing', async () => {
      await insertDocs([
        [1, 'referral', '0101010001', '2020-01-01'],
        [2, 'referral', '0101010001', '2020-01-02'],
        [3, 'referral', '0101010001', '2020-01-03'],
        [4, 'referral', '0101010001', '2026-05-01'],
      ]);
      expect(await run(job(), typeBased, { ...context, dryRun: true })).toEqual([]);
      expect(events.flatMap((e) => e.documentIds).sort()).toEqual([uuid(1), uuid(2), uuid(3)]);
      expect(await docIds()).toHaveLength(4);
      expect(await recorded()).toEqual([]);
    });
  });

  describe('repository-cleanup', () => {
    const repository = () => new OpenxdsRepository(openxds.pool, defaultOpenxdsNames);
    const job = () =>
      repositoryJob({
        config: { pageSize: 100, batchSize: 100, maxDeletesPerStep: 100, recheckIntervalMinutes: 60 },
        registry: deletions,
        repository: repository(),
        report,
      });
    const stored = async () =>
      (
        await openxds.pool.query<{ id: string }>('SELECT document_id::text AS id FROM repository_documents ORDER BY 1')
      ).rows.map((r) => r.id);
    const pendingCount = async () =>
      (await nxrg.pool.query('SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL')).rows.length;
    /** Runs the fill's pending pages, and returns what they pushed for later (the settles, then the recheck), not executed. */
    async function settlesOf(job: JobDefinition): Promise<Operation[]> {
      const pages = [job.defaultOperation];
      const later: Operation[] = [];
      while (pages.length > 0) {
        const op = pages.pop()!;
        if (op.kind === 'default') pages.push(...(await run(job, op)));
        else later.push(op);
      }
      return later.sort((a, b) => Number(a.kind === 'recheck') - Number(b.kind === 'recheck'));
    }
    /** Runs `ops` in order, and what each pushes, to the end. */
    async function drain(job: JobDefinition, ops: Operation[]) {
      const queue = [...ops];
      while (queue.length > 0) queue.push(...(await run(job, queue.shift()!)));
    }

    beforeEach(async () => {
      await nxrg.pool.query(
        `INSERT INTO deleted_documents (document_id, deleted_at, reason, openxds_deleted_at)
         VALUES ($1, now(), 'x', NULL), ($2, now(), 'x', NULL), ($3, now(), 'x', NULL), ($4, now(), 'x', now())`,
        [uuid(1), uuid(2), uuid(3), uuid(4)],
      );
      // 4's deletion is done and its copy gone; 5 was never deleted in NXRG.
      await openxds.pool.query(`INSERT INTO repository_documents SELECT unnest($1::uuid[])`, [[1, 2, 3, 5].map(uuid)]);
    });

    it('deletes only what is still deleted in NXRG, then marks it done', async () => {
      const later = await settlesOf(job());
      expect(later.map((op) => op.kind)).toEqual(['settle', 'recheck']);
      // Document 2 comes back into NXRG before the settle: kept. Document 3's deletion is marked done
      // by someone else, but OpenXDS still holds it: the mark does not save it (issue 12, item 9). The
      // settle leaves it (no longer pending); the fill's recheck finds the copy and deletes it.
      await insertDocs([[2, 'referral', '0101010001', '2020-01-01']]);
      await nxrg.pool.query('UPDATE deleted_documents SET openxds_deleted_at = now() WHERE document_id = $1', [
        uuid(3),
      ]);
      await drain(job(), later);
      expect(await stored()).toEqual([uuid(2), uuid(5)]);
      const { rows } = await nxrg.pool.query<{ id: string }>(
        'SELECT document_id::text AS id FROM deleted_documents WHERE openxds_deleted_at IS NULL',
      );
      expect(rows).toEqual([{ id: uuid(2) }]);
    });

    it('leaves the record pending when the OpenXDS delete fails, and a retry completes it', async () => {
      const [op] = await settlesOf(job());
      const failing = repositoryJob({
        config: { pageSize: 100, batchSize: 100, maxDeletesPerStep: 100, recheckIntervalMinutes: 60 },
        registry: deletions,
        repository: {
          presentIds: async () => [],
          deleteDocuments: () => Promise.reject(new Error('OpenXDS unavailable')),
        },
        report,
      });
      await expect(run(failing, op!)).rejects.toThrow('OpenXDS unavailable');
      expect(
        (await nxrg.pool.query('SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL')).rows,
      ).toHaveLength(3);
      await run(job(), op!);
      expect(await stored()).toEqual([uuid(5)]);
      expect(
        (await nxrg.pool.query('SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL')).rows,
      ).toHaveLength(0);
    });

    it('a crash between the OpenXDS delete and the mark leaves the records pending, and a retry marks them', async () => {
      const [op] = await settlesOf(job());
      const crashing = repositoryJob({
        config: { pageSize: 100, batchSize: 100, maxDeletesPerStep: 100, recheckIntervalMinutes: 60 },
        registry: deletions,
        repository: {
          presentIds: async () => [],
          deleteDocuments: async (ids, dryRun, stillDeleted) => {
            await repository().deleteDocuments(ids, dryRun, stillDeleted);
            throw new Error('crashed after the OpenXDS delete');
          },
        },
        report,
      });
      await expect(run(crashing, op!)).rejects.toThrow('crashed after the OpenXDS delete');
      expect(await stored()).toEqual([uuid(5)]);
      expect(await pendingCount()).toBe(3);
      await run(job(), op!);
      expect(await pendingCount()).toBe(0);
    });

    it('a crash in a later round of a settle keeps the earlier rounds done, and a retry settles the rest once', async () => {
      const rounds = { pageSize: 100, batchSize: 1, maxDeletesPerStep: 100, recheckIntervalMinutes: 60 };
      const [op] = await settlesOf(
        repositoryJob({ config: rounds, registry: deletions, repository: repository(), report }),
      );
      const asked: string[][] = [];
      const crashing = repositoryJob({
        config: rounds,
        registry: deletions,
        repository: {
          presentIds: async () => [],
          deleteDocuments: async (ids, dryRun, stillDeleted) => {
            asked.push([...ids]);
            const deleted = await repository().deleteDocuments(ids, dryRun, stillDeleted);
            if (asked.length === 2) throw new Error('crashed after the OpenXDS delete of round 2');
            return deleted;
          },
        },
        report,
      });
      await expect(run(crashing, op!)).rejects.toThrow('crashed after the OpenXDS delete of round 2');
      // Round 1 deleted and marked 1; round 2 deleted 2 in OpenXDS, and its mark rolled back.
      expect(await stored()).toEqual([uuid(3), uuid(5)]);
      expect(await pendingCount()).toBe(2);
      // The retry runs the same operation: 1 is no longer pending, 2 is found gone and marked, 3 settled.
      await run(crashing, op!);
      expect(asked.slice(2)).toEqual([[uuid(2)], [uuid(3)]]);
      expect(await stored()).toEqual([uuid(5)]);
      expect(await pendingCount()).toBe(0);
      expect(events.flatMap((e) => e.documentIds).sort()).toEqual([uuid(1), uuid(3)]);
    });

    it('two steppers running the same batch at once delete and report each document once', async () => {
      const [op] = await settlesOf(job());
      await Promise.all([run(job(), op!), run(job(), op!)]);
      expect(await stored()).toEqual([uuid(5)]);
      expect(events.flatMap((e) => e.documentIds).sort()).toEqual([uuid(1), uuid(2), uuid(3)]);
    });
  });
});
