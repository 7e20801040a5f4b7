import type { Pool } from 'pg';
import { defaultNxrgNames } from '../../../lib/cleanup/nxrg/names';
import { RepositoryDeletions } from '../../../lib/cleanup/nxrg/repository-deletions';
import { DeceasedDocuments } from '../../../lib/cleanup/nxrg/status90';
import { ExpiredDocuments } from '../../../lib/cleanup/nxrg/timebased';
import { generateRegistry } from '../../harness/cleanup-registry';
import { createTestSchema, type TestSchema } from '../../harness/postgres';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/**
 * A pool stand-in that EXPLAINs each statement the adapter sends instead of running it (its clients
 * too). A settle's locking select answers `locked` (none unless set), so that its mark is sent too.
 */
function explaining(pool: Pool) {
  const plans: PlanNode[] = [];
  const locked: { id: string; at: string; row: string }[] = [];
  const query = async (text: string, params: unknown[] = []) => {
    if (/^(BEGIN|COMMIT|ROLLBACK)\b/.test(text)) return { rows: [] };
    const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
    plans.push(rows[0]!['QUERY PLAN'][0].Plan);
    return { rows: /FOR UPDATE OF rec/.test(text) ? locked : [] };
  };
  const fake = { query, connect: async () => ({ query, release: () => undefined }) };
  return { pool: fake as unknown as Pool, plans, locked };
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];
/** How a plan reads tables: the indexes it scans, and `Seq Scan on <table>` for any full read. */
const scans = (plan: PlanNode) =>
  flatten(plan).flatMap((n) =>
    n['Index Name'] ? [n['Index Name']] : n['Node Type'] === 'Seq Scan' ? [`Seq Scan on ${n['Relation Name']}`] : [],
  );

/** Sort nodes (an Incremental Sort too) with a read of `documents` beneath them. */
const sortsOfDocuments = (plan: PlanNode) =>
  flatten(plan).filter(
    (n) =>
      n['Node Type'].endsWith('Sort') &&
      flatten(n).some((m) => m['Relation Name'] === 'documents' || m['Index Name']?.startsWith('documents_')),
  );

// Every cleanup read is an index range scan on a registry of realistic proportions (SPEC §4, issue #6).
describe('NXRG cleanup queries use their indexes', () => {
  let nxrg: TestSchema;
  let openxds: TestSchema;
  let expired: ExpiredDocuments;
  let deceasedDocuments: DeceasedDocuments;
  let deletions: RepositoryDeletions;
  let plans: PlanNode[];
  let locked: { id: string; at: string; row: string }[];
  const now = new Date('2026-06-01T00:00:00Z');

  beforeAll(async () => {
    [nxrg, openxds] = await Promise.all([createTestSchema(), createTestSchema()]);
    await generateRegistry(nxrg.pool, openxds.pool, {
      seed: 'plans',
      documents: 30_000,
      citizens: 3_000,
      earlierDeletions: 20_000,
      now,
    });
    const e = explaining(nxrg.pool);
    expired = new ExpiredDocuments(e.pool, defaultNxrgNames);
    deceasedDocuments = new DeceasedDocuments(e.pool, defaultNxrgNames);
    deletions = new RepositoryDeletions(e.pool, defaultNxrgNames);
    plans = e.plans;
    locked = e.locked;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([nxrg?.drop(), openxds?.drop()]);
  });
  beforeEach(() => plans.splice(0));

  const cutoff = new Date('2016-06-01T00:00:00Z');
  const cursor = { at: '2010-01-01 00:00:00.123456+00', id: '00000000-0000-0000-0000-000000000000' };
  const through = { at: '2012-01-01 00:00:00+00', id: 'ffffffff-0000-0000-0000-000000000000' };
  /** About 50 citizens of 3,000, as a citizen batch is a small share of a registry. */
  const citizens = { digit: '7', after: '0001000000', through: '0001500000' };
  const documentCursor = { citizen: '0001200007', id: '80000000-0000-0000-0000-000000000000' };
  /** A citizen batch's citizens are read by either index on the CPR, as the planner prefers. */
  const citizensIndex = expect.stringMatching(/^citizens_(pkey|cpr_suffix_idx)$/);
  /** When the generator marked its earlier deletions done (all at once: the done index is ordered by id within). */
  const doneAt = '2026-05-03 00:00:00+00';
  it.each([
    [
      'range end (created)',
      () => expired.expiredRangeEnd({ documentType: 'referral', basis: 'created', cutoff }, null, 10_000),
      ['documents_type_created_idx'],
    ],
    [
      'range end after a cursor (service)',
      () => expired.expiredRangeEnd({ documentType: 'referral', basis: 'service', cutoff }, cursor, 10_000),
      ['documents_type_service_idx'],
    ],
    ['suffix page', () => deceasedDocuments.citizenPage('7', '0001000000', 10_000), ['citizens_cpr_suffix_idx']],
    [
      'citizen batch range end',
      () => deceasedDocuments.deceasedRangeEnd(citizens, null, 1_000),
      [citizensIndex, 'documents_citizen_idx'],
    ],
    [
      'citizen batch range end after a cursor',
      () => deceasedDocuments.deceasedRangeEnd(citizens, documentCursor, 1_000),
      [citizensIndex, 'documents_citizen_idx'],
    ],
    [
      // The walk to the page's end, and (only when it falls short) the last entry read backwards.
      'pending page end',
      () => deletions.pendingRangeEnd(null, 1_000),
      ['deleted_documents_pending_time_idx', 'deleted_documents_pending_time_idx'],
    ],
    [
      'pending page end after a cursor',
      () =>
        deletions.pendingRangeEnd({ at: '2026-05-02 00:00:00+00', id: '80000000-0000-0000-0000-000000000000' }, 1_000),
      ['deleted_documents_pending_time_idx', 'deleted_documents_pending_time_idx'],
    ],
    [
      'done repository page (the recheck)',
      () => deletions.doneRepositoryPage(null, 1_000),
      ['deleted_documents_done_idx'],
    ],
    [
      'done repository page after a cursor',
      () => deletions.doneRepositoryPage({ at: doneAt, id: '80000000-0000-0000-0000-000000000000' }, 1_000),
      ['deleted_documents_done_idx'],
    ],
  ])('%s', async (_name, query, expected) => {
    await query();
    expect(plans).toHaveLength(1);
    expect(scans(plans[0]!).sort()).toEqual(expected);
  });

  it('the recheck walks the done index from its cursor, its keyset an index condition, and sorts nothing', async () => {
    await deletions.doneRepositoryPage({ at: doneAt, id: '80000000-0000-0000-0000-000000000000' }, 1_000);
    expect(flatten(plans[0]!).filter((n) => n['Node Type'].endsWith('Sort'))).toEqual([]);
    const walk = flatten(plans[0]!).find((n) => n['Index Name'] === 'deleted_documents_done_idx');
    expect(walk?.['Node Type']).toBe('Index Only Scan');
    expect(walk?.['Index Cond']).toMatch(/ROW\(openxds_deleted_at, document_id\) > ROW/);
  });

  it('a settle scans only its keyset range of the pending or the done index, and finds documents by primary key', async () => {
    const deletion = { at: now, dryRun: false };
    const remove = async () => [];
    const at = '2026-05-02 00:00:00+00';
    // Ranges of about a hundred deletions: a batch, against a registry some hundred times its size.
    const [after, through] = ['40000000-0000-0000-0000-000000000000', '42000000-0000-0000-0000-000000000000'];
    await deletions.settlePendingRange(
      { after: { at, id: after }, through: { at, id: through } },
      1_000,
      deletion,
      remove,
    );
    await deletions.settleDoneRange(
      { after: { at: doneAt, id: after }, through: { at: doneAt, id: through } },
      1_000,
      deletion,
      remove,
    );
    expect(plans.map((p) => scans(p).sort())).toEqual([
      ['deleted_documents_pending_time_idx', 'documents_pkey'],
      ['deleted_documents_done_idx', 'documents_pkey'],
    ]);
    for (const plan of plans) expect(flatten(plan).filter((n) => n['Node Type'].endsWith('Sort'))).toEqual([]);
    const range = flatten(plans[0]!).find((n) => n['Index Name'] === 'deleted_documents_pending_time_idx');
    expect(range?.['Index Cond']).toMatch(
      /ROW\(deleted_at, document_id\) > ROW.*ROW\(deleted_at, document_id\) <= ROW/,
    );
    const done = flatten(plans[1]!).find((n) => n['Index Name'] === 'deleted_documents_done_idx');
    expect(done?.['Index Cond']).toMatch(
      /ROW\(openxds_deleted_at, document_id\) > ROW.*ROW\(openxds_deleted_at, document_id\) <= ROW/,
    );
  });

  // The planner reads tuple ids one by one while they are a small share of the table (5,000 of 1M
  // records: Tid Scan; 5,000 of 200,000: a sequential scan, measured), as with the earlier primary key.
  it('a settle marks the records it locked by their tuple ids (no index on document_id needed)', async () => {
    locked.push(...Array.from({ length: 50 }, (_, i) => ({ id: cursor.id, at: doneAt, row: `(${i * 3},1)` })));
    try {
      await deletions.settlePendingRange({ after: null, through }, 50, { at: now, dryRun: false }, async () => []);
    } finally {
      locked.splice(0);
    }
    expect(plans).toHaveLength(2);
    expect(flatten(plans[1]!).map((n) => n['Node Type'])).toEqual(['ModifyTable', 'Tid Scan']);
  });

  it('the re-check at delete time (a restore while OpenXDS waited) looks the documents up by primary key', async () => {
    const ids = ['00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002'];
    await deletions.settlePendingRange({ after: null, through }, 50, { at: now, dryRun: false }, (_, stillDeleted) =>
      stillDeleted(ids),
    );
    expect(plans).toHaveLength(2);
    expect(scans(plans[1]!)).toEqual(['documents_pkey']);
  });

  it('an earlier version’s id-range resettle finds its records by reading every done deletion (slower, same records)', async () => {
    await deletions.settleDoneIdRange(
      { after: '40000000-0000-0000-0000-000000000000', through: '42000000-0000-0000-0000-000000000000' },
      1_000,
      { at: now, dryRun: false },
      async () => [],
    );
    // No index leads with document_id: the done index (or the table) is read whole, the range filtered.
    const reads = scans(plans[0]!).filter((name) => name !== 'documents_pkey');
    expect(reads).toEqual([expect.stringMatching(/^(deleted_documents_done_idx|Seq Scan on deleted_documents)$/)]);
  });

  it.each([
    ['from the start', null],
    ['after a document', documentCursor],
    ['past a citizen', { citizen: documentCursor.citizen, id: null }],
  ])(
    'a citizen batch range end %s walks (citizen_id, id) from its cursor and sorts no documents',
    async (_name, after) => {
      await deceasedDocuments.deceasedRangeEnd(citizens, after, 1_000);
      // Documents are read in index order and the walk stops at the range end: no sort of the batch's remainder.
      expect(sortsOfDocuments(plans[0]!)).toEqual([]);
      const walk = flatten(plans[0]!).find((n) => n['Index Name'] === 'documents_citizen_idx');
      const keyset =
        after === null ? '' : after.id === null ? ' AND \\(citizen_id > ' : ' AND \\(ROW\\(citizen_id, id\\) > ROW';
      expect(walk?.['Index Cond']).toMatch(
        new RegExp(`citizen_id = ANY \\(\\(array_agg\\(cit\\.cpr\\)\\)\\)\\)${keyset}`),
      );
    },
  );

  it.each([
    ['created, from the start', 'created', null],
    ['created, after a cursor', 'created', cursor],
    ['service, from the start', 'service', null],
  ] as const)(
    'a time-based range end %s walks its index in order and sorts no documents',
    async (_name, basis, after) => {
      await expired.expiredRangeEnd({ documentType: 'referral', basis, cutoff }, after, 1_000);
      // The walk stops at the range's end in index order: a sort would read and order every entry up to it.
      expect(sortsOfDocuments(plans[0]!)).toEqual([]);
    },
  );

  it('range deletes scan only their keyset range of their index; an id-list delete finds its documents by primary key', async () => {
    const ids = ['00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002'];
    const deletion = { reason: 'test', at: now, dryRun: false };
    // The deletion table's shape is read once, before the first delete (its catalogue plan is not ours).
    await Promise.all([expired.recordShape(), deceasedDocuments.recordShape()]);
    plans.splice(0);
    await expired.deleteExpiredRange(
      { documentType: 'referral', basis: 'created', cutoff },
      { after: cursor, through },
      deletion,
    );
    await deceasedDocuments.deleteOfDeceased(ids, deletion);
    await deceasedDocuments.deleteDeceasedRange(
      citizens,
      { after: documentCursor, through: { citizen: '0001300007', id: 'a0000000-0000-0000-0000-000000000000' } },
      deletion,
    );
    expect(plans.map((p) => scans(p).sort())).toEqual([
      ['documents_type_created_idx'],
      ['citizens_pkey', 'documents_pkey'],
      // The citizen range drives; citizens_pkey is also the locking re-check of each document's citizen.
      [citizensIndex, 'citizens_pkey', 'documents_citizen_idx'],
    ]);
    const range = flatten(plans[0]!).find((n) => n['Index Name'] === 'documents_type_created_idx');
    // Both keyset bounds are index conditions, not a filter over the type's whole expired range.
    expect(range?.['Index Cond']).toMatch(/ROW\(created_at, id\) > ROW.*ROW\(created_at, id\) <= ROW/);
    const deceased = flatten(plans[2]!).find((n) => n['Index Name'] === 'documents_citizen_idx');
    // Each citizen's documents are read within the (citizen, id) range only, and the re-check locks the citizen row.
    expect(deceased?.['Index Cond']).toMatch(
      /citizen_id = .*ROW\(citizen_id, id\) > ROW.*ROW\(citizen_id, id\) <= ROW/,
    );
    expect(flatten(plans[2]!).some((n) => n['Node Type'] === 'LockRows')).toBe(true);
  });
});
