import type { OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { timebasedJob } from '../../../../lib/cleanup/jobs/timebased';
import { defaultNxrgNames } from '../../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import { ExpiredDocuments, type RetentionBasis } from '../../../../lib/cleanup/nxrg/timebased';
import type { DeletionEvent } from '../../../../lib/cleanup/report';
import { noMarks } from '../../../harness/cleanup-job-marks';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

const NOW = new Date('2026-06-01T00:00:00Z');
const RETENTION_DAYS = 10;
/** now − retention: a document with exactly this time is not yet *older than* its retention. */
const BOUNDARY = '2026-05-22 00:00:00+00';
const context: OperationContext = { job: 'test', dryRun: false, now: () => NOW, marks: noMarks };

const AT_BOUNDARY = '00000000-0000-0000-0000-000000000001';
const JUST_OLDER = '00000000-0000-0000-0000-000000000002';
const JUST_YOUNGER = '00000000-0000-0000-0000-000000000003';

// SPEC §4: a document is deleted once it is *older than* its retention. Only registry-timebased-cleanup
// compares times: status90 decides by the citizen's status, repository-cleanup by the deletion record.
// The neighbours are 1 µs either side: PostgreSQL keeps microseconds, a JavaScript Date only milliseconds.
describe.each<RetentionBasis>(['created', 'service'])(
  'retention boundary of registry-timebased-cleanup, counted from the %s time (PostgreSQL)',
  (basis) => {
    let nxrg: TestSchema;
    let registry: ExpiredDocuments;
    const events: DeletionEvent[] = [];
    const job = () =>
      timebasedJob({
        config: {
          documentTypes: [{ documentType: 'referral', retentionDays: RETENTION_DAYS, basis, batchSize: 10 }],
          maxDeletesPerStep: 10,
        },
        registry,
        report: { deleted: (event) => events.push(event), dropped: () => undefined },
      });
    const remaining = async () =>
      (await nxrg.pool.query<{ id: string }>('SELECT id::text AS id FROM documents ORDER BY id')).rows.map((r) => r.id);

    beforeAll(async () => {
      nxrg = await createTestSchema();
      await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
      registry = new ExpiredDocuments(nxrg.pool, defaultNxrgNames);
    });
    afterAll(() => nxrg?.drop());
    beforeEach(async () => {
      events.splice(0);
      await nxrg.pool.query('TRUNCATE documents');
      // The other time column is far in the past, so only the basis under test can keep a document.
      const column = basis === 'created' ? 'created_at' : 'service_time';
      const other = basis === 'created' ? 'service_time' : 'created_at';
      await nxrg.pool.query(
        `INSERT INTO documents (id, document_type, citizen_id, ${column}, ${other}) VALUES
         ($1, 'referral', '0101010001', $4::timestamptz, '2000-01-01'),
         ($2, 'referral', '0101010001', $4::timestamptz - interval '1 microsecond', '2000-01-01'),
         ($3, 'referral', '0101010001', $4::timestamptz + interval '1 microsecond', '2000-01-01')`,
        [AT_BOUNDARY, JUST_OLDER, JUST_YOUNGER, BOUNDARY],
      );
    });

    const rule = () => ({
      documentType: 'referral',
      basis,
      cutoff: new Date(NOW.getTime() - RETENTION_DAYS * 86_400_000),
    });

    it('the range query does not reach a document exactly at now − retention', async () => {
      expect(await registry.expiredRangeEnd(rule(), null, 1)).toMatchObject({ id: JUST_OLDER });
      // Only one document is past retention: there is no second one to end a range of two.
      expect(await registry.expiredRangeEnd(rule(), null, 2)).toBeNull();
    });

    it('the delete re-check keeps a document exactly at now − retention', async () => {
      // A range that (by a stale cursor, or a clock step) reaches past the cutoff: only the older one goes.
      const beyond = { at: '2100-01-01 00:00:00+00', id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
      const deleted = await registry.deleteExpiredRange(
        rule(),
        { after: null, through: beyond },
        { reason: 'test', at: NOW, dryRun: false },
      );
      expect(deleted).toEqual([JUST_OLDER]);
      expect(await remaining()).toEqual([AT_BOUNDARY, JUST_YOUNGER]);
    });

    it('a whole time-based step deletes only what is older than its retention', async () => {
      const kinds = job().kinds;
      const [typeBased] = (await kinds.default!.execute({}, context))!;
      await kinds['type-based']!.execute(typeBased!.payload, context);
      expect(await remaining()).toEqual([AT_BOUNDARY, JUST_YOUNGER]);
      expect(events.flatMap((e) => e.documentIds)).toEqual([JUST_OLDER]);
    });
  },
);
