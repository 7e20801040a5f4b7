import fc from 'fast-check';
import type { JobDefinition, Operation, OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { MAX_LEGACY_BATCH_IDS } from '../../../../lib/cleanup/jobs/config';
import { rangesHolding, repositoryJob } from '../../../../lib/cleanup/jobs/repository';
import { status90Job } from '../../../../lib/cleanup/jobs/status90';
import { timebasedJob } from '../../../../lib/cleanup/jobs/timebased';
import type { RemoveCopies } from '../../../../lib/cleanup/nxrg/repository-deletions';
import type { CitizenRange, DeceasedCursor, DeceasedRange } from '../../../../lib/cleanup/nxrg/status90';
import type { Deletion, TimeCursor } from '../../../../lib/cleanup/nxrg/tables';
import type { ExpiredRange, ExpiryRule } from '../../../../lib/cleanup/nxrg/timebased';
import type { DeletionEvent, DroppedOperation } from '../../../../lib/cleanup/report';
import { memoryMarks, noMarks } from '../../../harness/cleanup-job-marks';

const NOW = new Date('2026-06-01T00:00:00Z');
const context: OperationContext = { job: 'test', dryRun: false, now: () => NOW, marks: noMarks };
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `doc-${String(from + i).padStart(6, '0')}`);

/** Executes an operation as the engine would: the payload round-trips through JSON and the kind's schema. */
async function run(job: JobDefinition, op: Operation, ctx = context): Promise<Operation[]> {
  const kind = job.kinds[op.kind];
  if (!kind) throw new Error(`no kind ${op.kind}`);
  return (await kind.execute(kind.payload.parse(JSON.parse(JSON.stringify(op.payload))), ctx)) ?? [];
}
const ofKind = (ops: Operation[], kind: string) => ops.filter((op) => op.kind === kind);

describe('registry-timebased-cleanup operations', () => {
  const rules = [
    { documentType: 'referral', retentionDays: 10, basis: 'created' as const, batchSize: 3 },
    { documentType: 'lab-result', retentionDays: 20, basis: 'service' as const, batchSize: 5 },
  ];
  const cursorOf = (id: string): TimeCursor => ({ at: `t-${id}`, id });
  /** A registry of `expired` documents in keyset order; the fake deletes every id not ending in 1. */
  function setup(expired: string[], maxDeletesPerStep = 100) {
    const ends: { rule: ExpiryRule; after: TimeCursor | null }[] = [];
    const deletes: { rule: ExpiryRule; range: ExpiredRange }[] = [];
    const events: DeletionEvent[] = [];
    const dropped: DroppedOperation[] = [];
    const rest = (after: TimeCursor | null) => expired.filter((id) => after === null || id > after.id);
    const job = timebasedJob({
      config: { documentTypes: rules, maxDeletesPerStep },
      registry: {
        async expiredRangeEnd(rule, after, size) {
          ends.push({ rule, after });
          const id = rest(after)[size - 1];
          return id === undefined ? null : cursorOf(id);
        },
        async deleteExpiredRange(rule, range) {
          deletes.push({ rule, range });
          return rest(range.after).filter(
            (id) => (range.through === null || id <= range.through.id) && !id.endsWith('1'),
          );
        },
      },
      report: { deleted: (e) => events.push(e), dropped: (d) => dropped.push(d) },
    });
    return { job, ends, deletes, events, dropped };
  }

  it('default supplies one type-based operation per configured type', async () => {
    const { job } = setup([]);
    expect(await run(job, job.defaultOperation)).toEqual([
      { kind: 'type-based', payload: { documentType: 'referral', after: null } },
      { kind: 'type-based', payload: { documentType: 'lab-result', after: null } },
    ]);
  });

  it('type-based deletes range after range of the type’s batch size to the end, with the cutoff of each delete', async () => {
    const { job, deletes, events } = setup(ids(8));
    expect(await run(job, { kind: 'type-based', payload: { documentType: 'referral', after: null } })).toEqual([]);
    expect(deletes.map((d) => d.range)).toEqual([
      { after: null, through: cursorOf('doc-000002') },
      { after: cursorOf('doc-000002'), through: cursorOf('doc-000005') },
      { after: cursorOf('doc-000005'), through: null },
    ]);
    expect(deletes[0]!.rule).toEqual({
      documentType: 'referral',
      basis: 'created',
      cutoff: new Date('2026-05-22T00:00:00Z'),
    });
    expect(events.map((e) => [e.operation, e.documentIds])).toEqual([
      ['range-delete', ['doc-000000', 'doc-000002']],
      ['range-delete', ['doc-000003', 'doc-000004', 'doc-000005']],
      ['range-delete', ['doc-000006', 'doc-000007']],
    ]);
  });

  it('stops at the per-step cap and pushes a continuation with the cursor', async () => {
    const { job, ends } = setup(ids(20), 7);
    const first = await run(job, { kind: 'type-based', payload: { documentType: 'lab-result', after: null } });
    expect(first).toEqual([
      { kind: 'type-based', payload: { documentType: 'lab-result', after: cursorOf('doc-000004') } },
    ]);
    expect(ends[0]!.rule.cutoff).toEqual(new Date('2026-05-12T00:00:00Z'));
    const second = await run(job, first[0]!);
    expect(ends[1]!.after).toEqual(cursorOf('doc-000004'));
    expect(second).toEqual([
      { kind: 'type-based', payload: { documentType: 'lab-result', after: cursorOf('doc-000009') } },
    ]);
  });

  it('stops when the next range would not fit the time left, and pushes a continuation', async () => {
    const { job, deletes } = setup(ids(20));
    const ctx = { ...context, timeLeftMs: () => -1 };
    const ops = await run(job, { kind: 'type-based', payload: { documentType: 'referral', after: null } }, ctx);
    expect(deletes).toHaveLength(1);
    expect(ops).toEqual([{ kind: 'type-based', payload: { documentType: 'referral', after: cursorOf('doc-000002') } }]);
  });

  it('drops operations of a document type no longer configured, deleting nothing', async () => {
    const { job, deletes, ends, dropped } = setup(ids(3));
    expect(await run(job, { kind: 'type-based', payload: { documentType: 'x-ray', after: null } })).toEqual([]);
    expect(deletes).toEqual([]);
    expect(ends).toEqual([]);
    expect(dropped).toEqual([{ job: 'registry-timebased-cleanup', documentType: 'x-ray' }]);
  });

  it.each([
    ['type-based', { documentType: '', after: null }],
    ['type-based', { documentType: 'referral', after: { at: 'x' } }],
    ['type-based', { after: null }],
  ])('rejects a malformed %s payload', (kind, payload) => {
    const { job } = setup([]);
    expect(job.kinds[kind]!.payload.safeParse(payload).success).toBe(false);
  });
});

describe('registry-status90-cleanup operations', () => {
  /** The fake registry's documents are all of one deceased citizen. */
  const at = (id: string): DeceasedCursor => ({ citizen: '0000000005', id });
  function setup(
    citizens: string[],
    documents: string[],
    config = { suffixPageSize: 10, citizenBatchSize: 3, batchSize: 4, maxDeletesPerStep: 100 },
  ) {
    const deletes: { citizens: CitizenRange; range: DeceasedRange }[] = [];
    const deletions: Deletion[] = [];
    const legacy: string[][] = [];
    const events: DeletionEvent[] = [];
    const rest = (after: DeceasedCursor | null) => documents.filter((d) => after === null || d > after.id!);
    const job = status90Job({
      config,
      registry: {
        async citizenPage(digit, after, limit) {
          return citizens.filter((c) => c.endsWith(digit) && (after === null || c > after)).slice(0, limit);
        },
        async deceasedRangeEnd(_citizens, after, size) {
          const id = rest(after)[size - 1];
          return id === undefined ? null : at(id);
        },
        // Deletes every id of the range not ending in 1 (those citizens are no longer deceased).
        async deleteDeceasedRange(citizens, range, deletion) {
          deletes.push({ citizens, range });
          deletions.push(deletion);
          return rest(range.after).filter(
            (d) => (range.through === null || d <= range.through.id!) && !d.endsWith('1'),
          );
        },
        async deleteOfDeceased(ids) {
          legacy.push([...ids]);
          return ids.filter((d) => !d.endsWith('1'));
        },
      },
      report: { deleted: (e) => events.push(e) },
    });
    return { job, deletes, deletions, legacy, events };
  }

  it('default supplies a suffix operation for each digit 0–9', async () => {
    const { job } = setup([], []);
    const ops = await run(job, job.defaultOperation);
    expect(ops.map((op) => (op.payload as { digit: string }).digit)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
    ]);
    expect(ofKind(ops, 'suffix')).toHaveLength(10);
  });

  it('suffix batches are consecutive CPR ranges that cover every citizen of the digit exactly once, page after page', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 9_999_999 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        async (numbers, suffixPageSize, citizenBatchSize) => {
          const citizens = numbers.map((n) => `${String(n).padStart(9, '0')}3`).sort();
          const { job } = setup(citizens, [], {
            suffixPageSize,
            citizenBatchSize,
            batchSize: 4,
            maxDeletesPerStep: 100,
          });
          const batches: CitizenRange[] = [];
          const pending: Operation[] = [{ kind: 'suffix', payload: { digit: '3', after: null } }];
          while (pending.length) {
            const children = await run(job, pending.shift()!);
            expect(ofKind(children, 'suffix').length).toBeLessThanOrEqual(1);
            batches.push(...ofKind(children, 'citizen-batch').map((op) => op.payload as CitizenRange));
            pending.push(...ofKind(children, 'suffix'));
          }
          const covered = batches.flatMap((b) =>
            citizens.filter((c) => (b.after === null || c > b.after) && c <= b.through),
          );
          expect(covered).toEqual(citizens);
          for (const [i, b] of batches.entries()) expect(b.after).toBe(i === 0 ? null : batches[i - 1]!.through);
          expect(
            batches.every(
              (b) =>
                citizens.filter((c) => (b.after === null || c > b.after) && c <= b.through).length <= citizenBatchSize,
            ),
          ).toBe(true);
        },
      ),
    );
  });

  const citizens = { digit: '1', after: '0000000001', through: '0000000011' };
  const batch = (documentsAfter: DeceasedCursor | string | null) => ({
    kind: 'citizen-batch',
    payload: { ...citizens, documentsAfter },
  });

  it('a citizen batch deletes its deceased citizens’ documents itself, range after range to the end', async () => {
    const { job, deletes, events } = setup([], ids(10));
    expect(await run(job, batch(null))).toEqual([]);
    expect(deletes).toEqual([
      { citizens: { ...citizens, documentsAfter: null }, range: { after: null, through: at('doc-000003') } },
      {
        citizens: { ...citizens, documentsAfter: null },
        range: { after: at('doc-000003'), through: at('doc-000007') },
      },
      { citizens: { ...citizens, documentsAfter: null }, range: { after: at('doc-000007'), through: null } },
    ]);
    expect(events.map((e) => [e.operation, e.requested, e.documentIds])).toEqual([
      ['range-delete', 4, ['doc-000000', 'doc-000002', 'doc-000003']],
      ['range-delete', 4, ['doc-000004', 'doc-000005', 'doc-000006', 'doc-000007']],
      ['range-delete', 4, ['doc-000008', 'doc-000009']],
    ]);
  });

  it('stops at the per-step cap and pushes a citizen batch carrying its document cursor, never an id list', async () => {
    const { job, deletes } = setup([], ids(10), {
      suffixPageSize: 10,
      citizenBatchSize: 3,
      batchSize: 4,
      maxDeletesPerStep: 7,
    });
    const first = await run(job, batch(null));
    expect(first).toEqual([batch(at('doc-000003'))]);
    expect(await run(job, first[0]!)).toEqual([batch(at('doc-000007'))]);
    expect(deletes.map((d) => d.range.after)).toEqual([null, at('doc-000003')]);
    expect(await run(job, batch(at('doc-000007')))).toEqual([]);
  });

  it('stops when the next range would not fit the time left, and pushes a continuation', async () => {
    const { job, deletes } = setup([], ids(10));
    expect(await run(job, batch(null), { ...context, timeLeftMs: () => -1 })).toEqual([batch(at('doc-000003'))]);
    expect(deletes).toHaveLength(1);
  });

  it('restarts from its first document a citizen batch carrying an earlier version’s document-id cursor', async () => {
    const { job, deletes, events } = setup([], ids(6));
    expect(await run(job, batch('doc-000003'))).toEqual([]);
    expect(deletes.map((d) => d.range)).toEqual([
      { after: null, through: at('doc-000003') },
      { after: at('doc-000003'), through: null },
    ]);
    expect(events.flatMap((e) => e.documentIds)).toEqual([
      'doc-000000',
      'doc-000002',
      'doc-000003',
      'doc-000004',
      'doc-000005',
    ]);
  });

  it.each([
    [{ citizen: '', id: 'doc-000001' }],
    [{ citizen: '0000000005' }],
    [{ citizen: '0000000005', id: '' }],
    [''],
  ])('rejects a citizen batch with the malformed cursor %j', (documentsAfter) => {
    const { job } = setup([], []);
    expect(job.kinds['citizen-batch']!.payload.safeParse({ ...citizens, documentsAfter }).success).toBe(false);
  });

  it('counts in a dry run, walking every range, and records each delete under the job’s name', async () => {
    const { job, events, deletions } = setup([], ids(6));
    expect(await run(job, batch(null), { ...context, dryRun: true })).toEqual([]);
    expect(events.map((e) => e.dryRun)).toEqual([true, true]);
    expect(deletions).toEqual([
      { reason: 'registry-status90-cleanup', at: NOW, dryRun: true },
      { reason: 'registry-status90-cleanup', at: NOW, dryRun: true },
    ]);
  });

  it('still runs a batch-delete id list of an earlier version, within the per-step cap', async () => {
    const { job, legacy, events } = setup([], [], {
      suffixPageSize: 10,
      citizenBatchSize: 3,
      batchSize: 4,
      maxDeletesPerStep: 3,
    });
    expect(await run(job, { kind: 'batch-delete', payload: { ids: ids(5) } })).toEqual([
      { kind: 'batch-delete', payload: { ids: ids(2, 3) } },
    ]);
    expect(legacy).toEqual([ids(3)]);
    expect(events.map((e) => [e.operation, e.documentIds])).toEqual([['batch-delete', ['doc-000000', 'doc-000002']]]);
  });
});

describe('repository-cleanup operations', () => {
  const at = (id: string) => `2026-05-01 00:00:00.${id.slice(-6)}+00`;
  const cursorOf = (id: string): TimeCursor => ({ at: at(id), id });
  /**
   * Pending deletions `pending` (their time order is their id order), done ones `done` of which OpenXDS
   * holds `back`; the fake settles every id of a range but 'doc-000001' (back in NXRG), at most `limit`.
   * `removed` and `asked` hold what each OpenXDS delete and lookup was given.
   */
  function setup(sizes = { pageSize: 5, batchSize: 2, maxDeletesPerStep: 3 }) {
    const config = { ...sizes, recheckIntervalMinutes: 60 };
    const pending = ids(9);
    const done = ids(7, 20);
    const back = ['doc-000021', 'doc-000024'];
    const settled: string[][] = [];
    const removed: string[][] = [];
    const asked: string[][] = [];
    const events: DeletionEvent[] = [];
    // No document comes back in this registry: the re-check at delete time confirms every id.
    const stillDeleted = async (ids: readonly string[]) => [...ids];
    const inRange = (all: string[], after: string | null, through: string) =>
      all.filter((id) => (after === null || id > after) && id <= through && id !== 'doc-000001');
    const settle = async <K>(
      found: string[],
      through: string,
      limit: number,
      remove: RemoveCopies,
      key: (id: string) => K,
    ) => {
      const taken = found.slice(0, limit);
      settled.push(taken);
      const last = taken.at(-1);
      const next = taken.length === limit && last !== through ? key(last!) : null;
      return { settled: taken, deleted: await remove(taken, stillDeleted), next };
    };
    const job = repositoryJob({
      config,
      registry: {
        async pendingRangeEnd(after, size) {
          const rest = pending.filter((id) => after === null || id > after.id);
          if (rest.length === 0) return null;
          const full = rest.length >= size;
          return { through: cursorOf(full ? rest[size - 1]! : rest.at(-1)!), full };
        },
        async doneRepositoryPage(after, limit) {
          return done
            .filter((id) => after === null || id > after.id)
            .slice(0, limit)
            .map(cursorOf);
        },
        settlePendingRange: (range, limit, _deletion, remove) =>
          settle(
            inRange(pending, range.after?.id ?? null, range.through.id),
            range.through.id,
            limit,
            remove,
            cursorOf,
          ),
        settleDoneRange: (range, limit, _deletion, remove) =>
          settle(inRange(done, range.after?.id ?? null, range.through.id), range.through.id, limit, remove, cursorOf),
        settleDoneIdRange: (range, limit, _deletion, remove) =>
          settle(inRange(done, range.after, range.through), range.through, limit, remove, (id) => id),
        async settleRepositoryDeletions(batch, _deletion, remove) {
          settled.push([...batch]);
          return remove(
            batch.filter((id) => id !== 'doc-000001'),
            stillDeleted,
          );
        },
      },
      repository: {
        async presentIds(batch) {
          asked.push([...batch]);
          return batch.filter((id) => back.includes(id));
        },
        async deleteDocuments(batch, dryRun, confirm) {
          removed.push([...batch]);
          return dryRun ? [] : (await confirm(batch)).filter((id) => id !== 'doc-000002');
        },
      },
      report: { deleted: (e) => events.push(e) },
    });
    return { job, settled, removed, asked, events };
  }

  it('pages pending deletions in time order, one keyset range per page, and continues with the cursor', async () => {
    const { job } = setup();
    const first = await run(job, job.defaultOperation);
    expect(ofKind(first, 'settle')).toEqual([
      { kind: 'settle', payload: { after: null, through: cursorOf('doc-000004') } },
    ]);
    expect(ofKind(first, 'default')).toEqual([{ kind: 'default', payload: { after: cursorOf('doc-000004') } }]);
    // The first page of a fill also starts the recheck of the deletions marked done; a continuation does not.
    expect(ofKind(first, 'recheck')).toEqual([
      { kind: 'recheck', payload: { after: null, started: NOW.toISOString() } },
    ]);
    // The last page falls short: it runs to the last pending deletion, and nothing follows it.
    expect(await run(job, ofKind(first, 'default')[0]!)).toEqual([
      { kind: 'settle', payload: { after: cursorOf('doc-000004'), through: cursorOf('doc-000008') } },
    ]);
    expect(await run(job, { kind: 'default', payload: { after: cursorOf('doc-000008') } })).toEqual([]);
    expect(first.every((op) => Buffer.byteLength(JSON.stringify(op)) < 200)).toBe(true);
  });

  it('a settle works through its range in rounds of the batch size, one OpenXDS delete each, and stops at the per-step cap', async () => {
    const { job, settled, removed, events } = setup({ pageSize: 9, batchSize: 2, maxDeletesPerStep: 5 });
    const range = { after: null, through: cursorOf('doc-000008') };
    // Two rounds of two fit the cap of five, a third would not: the rest of the range is pushed.
    expect(await run(job, { kind: 'settle', payload: range })).toEqual([
      { kind: 'settle', payload: { ...range, after: cursorOf('doc-000004') } },
    ]);
    expect(settled).toEqual([
      ['doc-000000', 'doc-000002'],
      ['doc-000003', 'doc-000004'],
    ]);
    expect(removed).toEqual(settled);
    expect(events).toEqual([
      { job: 'test', operation: 'settle', dryRun: false, requested: 2, documentIds: ['doc-000000'] },
      { job: 'test', operation: 'settle', dryRun: false, requested: 2, documentIds: ['doc-000003', 'doc-000004'] },
    ]);
    // The continuation settles the rest, the last round ending on the range's end: nothing is pushed.
    expect(await run(job, { kind: 'settle', payload: { ...range, after: cursorOf('doc-000004') } })).toEqual([]);
    expect(settled.slice(2)).toEqual([
      ['doc-000005', 'doc-000006'],
      ['doc-000007', 'doc-000008'],
    ]);
  });

  it('a settle never takes more than the per-step cap, even when the batch size is larger', async () => {
    const { job, settled } = setup({ pageSize: 9, batchSize: 5, maxDeletesPerStep: 3 });
    const range = { after: null, through: cursorOf('doc-000008') };
    expect(await run(job, { kind: 'settle', payload: range })).toEqual([
      { kind: 'settle', payload: { ...range, after: cursorOf('doc-000003') } },
    ]);
    expect(settled).toEqual([['doc-000000', 'doc-000002', 'doc-000003']]);
  });

  it('a settle starts no new round once the time budget would not hold one, and pushes the rest', async () => {
    const { job, settled } = setup({ pageSize: 9, batchSize: 2, maxDeletesPerStep: 100 });
    const range = { after: null, through: cursorOf('doc-000008') };
    expect(await run(job, { kind: 'settle', payload: range }, { ...context, timeLeftMs: () => -1 })).toEqual([
      { kind: 'settle', payload: { ...range, after: cursorOf('doc-000002') } },
    ]);
    expect(settled).toEqual([['doc-000000', 'doc-000002']]);
  });

  it('the recheck goes through up to a page of done deletions a batch at a time, and pushes resettles for the copies OpenXDS has again', async () => {
    const { job, settled, asked } = setup();
    // Rounds of two within the page of five: 20–21 (21 is back), 22–23; then a continuation.
    const first = await run(job, { kind: 'recheck', payload: { after: null } });
    expect(first).toEqual([
      { kind: 'resettle', payload: { after: cursorOf('doc-000020'), through: cursorOf('doc-000021') } },
      { kind: 'recheck', payload: { after: cursorOf('doc-000023') } },
    ]);
    expect(asked).toEqual([ids(2, 20), ids(2, 22)]);
    expect(await run(job, first[1]!)).toEqual([
      { kind: 'resettle', payload: { after: cursorOf('doc-000023'), through: cursorOf('doc-000024') } },
    ]);
    expect(await run(job, first[0]!)).toEqual([]);
    expect(settled).toEqual([['doc-000021']]);
  });

  it('a recheck pass carries its start to its last page, which pushes a recheck-done recording it as the mark', async () => {
    const { job } = setup();
    const started = NOW.toISOString();
    const first = await run(job, { kind: 'recheck', payload: { after: null, started } });
    expect(ofKind(first, 'recheck')).toEqual([
      { kind: 'recheck', payload: { after: cursorOf('doc-000023'), started } },
    ]);
    expect(ofKind(first, 'recheck-done')).toEqual([]);
    const last = await run(job, ofKind(first, 'recheck')[0]!);
    expect(last).toEqual([
      { kind: 'resettle', payload: { after: cursorOf('doc-000023'), through: cursorOf('doc-000024') } },
      { kind: 'recheck-done', payload: { started } },
    ]);
    const marks = memoryMarks();
    expect(await run(job, last[1]!, { ...context, marks })).toEqual([]);
    expect(marks.recorded).toEqual(new Map([['recheck', NOW]]));
    // A dry run's pass (its resettles delete nothing) never stands in for a real one.
    const dryMarks = memoryMarks();
    await run(job, last[1]!, { ...context, dryRun: true, marks: dryMarks });
    expect(dryMarks.recorded).toEqual(new Map([['recheck-dry-run', NOW]]));
  });

  it.each([
    ['no recheck within the interval of the last finished one', 59, []],
    ['a recheck once the interval has passed', 60, ['recheck']],
  ])('a fill starts %s', async (_, minutes, kinds) => {
    const { job } = setup();
    const marks = memoryMarks();
    await marks.advance('recheck', NOW);
    const later = new Date(NOW.getTime() + minutes * 60_000);
    const ops = await run(job, job.defaultOperation, { ...context, now: () => later, marks });
    expect(ofKind(ops, 'recheck').map((op) => op.kind)).toEqual(kinds);
    // A dry run keeps its own mark: the real one does not hold it back.
    const dry = await run(job, job.defaultOperation, { ...context, dryRun: true, now: () => later, marks });
    expect(ofKind(dry, 'recheck')).toHaveLength(1);
  });

  it('still runs the id-list batch deletes an earlier version left on the stack, within the cap', async () => {
    const { job, settled, events } = setup();
    expect(await run(job, { kind: 'batch-delete', payload: { ids: ids(5) } })).toEqual([
      { kind: 'batch-delete', payload: { ids: ids(2, 3) } },
    ]);
    expect(settled).toEqual([ids(3)]);
    expect(events.map((e) => e.documentIds)).toEqual([['doc-000000']]);
  });

  it('an earlier version’s id-cursor continuation starts its page over in time order, without a second recheck', async () => {
    const { job } = setup();
    const ops = await run(job, { kind: 'default', payload: { after: 'doc-000004' } });
    expect(ofKind(ops, 'settle')[0]!.payload).toEqual({ after: null, through: cursorOf('doc-000004') });
    expect(ofKind(ops, 'recheck')).toEqual([]);
  });

  it('still runs the id-range resettles and the id-cursor recheck an earlier version left on the stack', async () => {
    const { job, settled } = setup({ pageSize: 5, batchSize: 2, maxDeletesPerStep: 1 });
    // An id range settles in id order and continues as an id range.
    expect(await run(job, { kind: 'resettle', payload: { after: 'doc-000020', through: 'doc-000022' } })).toEqual([
      { kind: 'resettle', payload: { after: 'doc-000021', through: 'doc-000022' } },
    ]);
    expect(settled).toEqual([['doc-000021']]);
    // An id cursor cannot be placed in done order: the pass starts over from the first done deletion.
    const ops = await run(job, { kind: 'recheck', payload: { after: 'doc-000023', started: NOW.toISOString() } });
    expect(ofKind(ops, 'resettle')[0]!.payload).toEqual({
      after: cursorOf('doc-000020'),
      through: cursorOf('doc-000021'),
    });
  });

  it.each([
    ['settle', { after: null }],
    ['settle', { after: null, through: { at: '2026-05-01 00:00:00+00' } }],
    ['settle', { after: 'doc-000001', through: cursorOf('doc-000002') }],
    ['resettle', { after: null, through: '' }],
    ['resettle', { after: 'doc-000001', through: cursorOf('doc-000002') }],
    ['recheck', { after: { id: 'doc-000001' } }],
    ['recheck', { after: null, started: 'yesterday' }],
    ['recheck-done', {}],
    ['recheck-done', { started: '2026-06-01' }],
    ['default', { after: { id: 'doc-000001' } }],
  ])('rejects a malformed %s payload', (kind, payload) => {
    expect(setup().job.kinds[kind]!.payload.safeParse(payload).success).toBe(false);
  });

  it('resettle ranges cover every copy found once, each spanning at most a batch of the page and ending on a copy', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 999 }), { maxLength: 60 }),
        fc.func(fc.boolean()),
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.constant('doc-')),
        (numbers, isBack, size, after) => {
          const done = numbers.sort((a, b) => a - b).map((n) => `doc-${String(n).padStart(6, '0')}`);
          const back = new Set(done.filter((id) => isBack(id)));
          const ranges = rangesHolding(done, (id) => back.has(id), after, size);
          const within = (r: { after: string | null; through: string }) =>
            done.filter((id) => (r.after === null || id > r.after) && id <= r.through);
          expect(ranges.flatMap((r) => within(r).filter((id) => back.has(id)))).toEqual([...back]);
          for (const r of ranges) {
            expect(within(r).length).toBeLessThanOrEqual(size);
            expect(back.has(r.through)).toBe(true);
          }
          for (const [i, r] of ranges.entries()) if (i > 0) expect(r.after! >= ranges[i - 1]!.through).toBe(true);
        },
      ),
    );
  });
});

it('a batch delete of the largest allowed size stays far under the 400 KB DynamoDB item limit', () => {
  const uuids = Array.from({ length: MAX_LEGACY_BATCH_IDS }, () => crypto.randomUUID());
  const bytes = Buffer.byteLength(
    JSON.stringify({ kind: 'batch-delete', payload: { documentType: 'x'.repeat(100), ids: uuids } }),
  );
  expect(bytes).toBeLessThan(100_000);
});
