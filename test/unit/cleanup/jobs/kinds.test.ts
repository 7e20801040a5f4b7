import fc from 'fast-check';
import type { JobDefinition, Operation, OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { repositoryJob } from '../../../../lib/cleanup/jobs/repository';
import { status90Job } from '../../../../lib/cleanup/jobs/status90';
import { timebasedJob } from '../../../../lib/cleanup/jobs/timebased';
import type { DeletionEvent, DroppedOperation } from '../../../../lib/cleanup/report';
import { MAX_BATCH_SIZE } from '../../../../lib/config/cleanup-jobs';
import type { CitizenRange, ExpiryRule } from '../../../../lib/nxrg/registry';

const NOW = new Date('2026-06-01T00:00:00Z');
const context: OperationContext = { job: 'test', dryRun: false, now: () => NOW };
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
  function setup(pages: string[][], maxDeletesPerStep = 100) {
    const calls: { rule: ExpiryRule; after: unknown }[] = [];
    const deletes: { ids: readonly string[]; rule: ExpiryRule }[] = [];
    const events: DeletionEvent[] = [];
    const dropped: DroppedOperation[] = [];
    const job = timebasedJob({
      config: { documentTypes: rules, pageSize: 7, maxDeletesPerStep },
      registry: {
        async expiredPage(rule, after) {
          calls.push({ rule, after });
          const page = pages.shift() ?? [];
          return { ids: page, last: page.length ? { at: `t-${page.at(-1)}`, id: page.at(-1)! } : null };
        },
        async deleteExpired(batch, rule) {
          deletes.push({ ids: batch, rule });
          return batch.filter((id) => !id.endsWith('1'));
        },
      },
      report: { deleted: (e) => events.push(e), dropped: (d) => dropped.push(d) },
    });
    return { job, calls, deletes, events, dropped };
  }

  it('default supplies one type-based operation per configured type', async () => {
    const { job } = setup([]);
    expect(await run(job, job.defaultOperation)).toEqual([
      { kind: 'type-based', payload: { documentType: 'referral', after: null } },
      { kind: 'type-based', payload: { documentType: 'lab-result', after: null } },
    ]);
  });

  it('type-based pushes batch deletes of the type’s size and, after a full page, a continuation with the cursor', async () => {
    const { job, calls } = setup([ids(7), ids(2, 7)]);
    const first = await run(job, { kind: 'type-based', payload: { documentType: 'referral', after: null } });
    expect(calls[0]!.rule).toEqual({
      documentType: 'referral',
      basis: 'created',
      cutoff: new Date('2026-05-22T00:00:00Z'),
    });
    expect(ofKind(first, 'batch-delete').map((op) => (op.payload as { ids: string[] }).ids)).toEqual([
      ids(3),
      ids(3, 3),
      ids(1, 6),
    ]);
    const [next] = ofKind(first, 'type-based');
    expect(next!.payload).toEqual({ documentType: 'referral', after: { at: 't-doc-000006', id: 'doc-000006' } });
    const second = await run(job, next!);
    expect(calls[1]!.after).toEqual({ at: 't-doc-000006', id: 'doc-000006' });
    expect(ofKind(second, 'type-based')).toEqual([]);
  });

  it('batch delete re-derives the cutoff from the rule at delete time and reports what was deleted', async () => {
    const { job, deletes, events } = setup([]);
    expect(
      await run(job, {
        kind: 'batch-delete',
        payload: { documentType: 'lab-result', ids: ['doc-000000', 'doc-000001'] },
      }),
    ).toEqual([]);
    expect(deletes[0]!.rule).toEqual({
      documentType: 'lab-result',
      basis: 'service',
      cutoff: new Date('2026-05-12T00:00:00Z'),
    });
    expect(events).toEqual([
      { job: 'test', operation: 'batch-delete', dryRun: false, requested: 2, documentIds: ['doc-000000'] },
    ]);
  });

  it('batch delete deletes at most the per-step cap and pushes the rest', async () => {
    const { job, deletes } = setup([], 4);
    const rest = await run(job, { kind: 'batch-delete', payload: { documentType: 'referral', ids: ids(10) } });
    expect(deletes.map((d) => d.ids)).toEqual([ids(4)]);
    expect(rest).toEqual([{ kind: 'batch-delete', payload: { documentType: 'referral', ids: ids(6, 4) } }]);
  });

  it('drops operations of a document type no longer configured, deleting nothing', async () => {
    const { job, deletes, calls, dropped } = setup([ids(3)]);
    expect(await run(job, { kind: 'batch-delete', payload: { documentType: 'x-ray', ids: ids(2) } })).toEqual([]);
    expect(await run(job, { kind: 'type-based', payload: { documentType: 'x-ray', after: null } })).toEqual([]);
    expect(deletes).toEqual([]);
    expect(calls).toEqual([]);
    expect(dropped).toEqual([
      { job: 'registry-timebased-cleanup', documentType: 'x-ray' },
      { job: 'registry-timebased-cleanup', documentType: 'x-ray' },
    ]);
  });

  it.each([
    ['batch-delete', { documentType: 'referral', ids: [] }],
    ['batch-delete', { documentType: 'referral', ids: ids(MAX_BATCH_SIZE + 1) }],
    ['batch-delete', { ids: ['a'] }],
    ['type-based', { documentType: '', after: null }],
    ['type-based', { documentType: 'referral', after: { at: 'x' } }],
  ])('rejects a malformed %s payload', (kind, payload) => {
    const { job } = setup([]);
    expect(job.kinds[kind]!.payload.safeParse(payload).success).toBe(false);
  });
});

describe('registry-status90-cleanup operations', () => {
  function setup(
    citizens: string[],
    documents: string[],
    config = { suffixPageSize: 10, citizenBatchSize: 3, batchSize: 4, maxDeletesPerStep: 100 },
  ) {
    const ranges: { range: CitizenRange; after: string | null }[] = [];
    const job = status90Job({
      config,
      registry: {
        async citizenPage(digit, after, limit) {
          return citizens.filter((c) => c.endsWith(digit) && (after === null || c > after)).slice(0, limit);
        },
        async deceasedDocumentPage(range, after, limit) {
          ranges.push({ range, after });
          return documents.filter((d) => after === null || d > after).slice(0, limit);
        },
        async deleteOfDeceased(batch) {
          return [...batch];
        },
      },
      report: { deleted: () => undefined },
    });
    return { job, ranges };
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

  it('a citizen batch pushes one batch delete, and pages on when its deceased have more documents than a batch', async () => {
    const { job, ranges } = setup([], ids(6));
    const batch = {
      kind: 'citizen-batch',
      payload: { digit: '1', after: null, through: '0000000011', documentsAfter: null },
    };
    const first = await run(job, batch);
    expect(ofKind(first, 'batch-delete')).toEqual([{ kind: 'batch-delete', payload: { ids: ids(4) } }]);
    const [more] = ofKind(first, 'citizen-batch');
    expect(more!.payload).toMatchObject({ through: '0000000011', documentsAfter: 'doc-000003' });
    expect(await run(job, more!)).toEqual([{ kind: 'batch-delete', payload: { ids: ids(2, 4) } }]);
    expect(ranges.map((r) => r.after)).toEqual([null, 'doc-000003']);
    expect(await run(job, { ...batch, payload: { ...batch.payload, documentsAfter: 'doc-000005' } })).toEqual([]);
  });
});

describe('repository-cleanup operations', () => {
  it('pages through pending deletions, and batch delete settles only what OpenXDS confirms, within the cap', async () => {
    const pending = ids(9);
    const settled: string[][] = [];
    const events: DeletionEvent[] = [];
    const job = repositoryJob({
      config: { pageSize: 5, batchSize: 2, maxDeletesPerStep: 3 },
      registry: {
        async pendingRepositoryPage(after, limit) {
          return pending.filter((id) => after === null || id > after).slice(0, limit);
        },
        async settleRepositoryDeletions(batch, _deletion, remove) {
          settled.push([...batch]);
          return remove(batch.filter((id) => id !== 'doc-000001'));
        },
      },
      repository: { deleteDocuments: async (batch, dryRun) => (dryRun ? [] : [...batch]) },
      report: { deleted: (e) => events.push(e) },
    });
    const first = await run(job, job.defaultOperation);
    expect(ofKind(first, 'batch-delete').map((op) => (op.payload as { ids: string[] }).ids)).toEqual([
      ids(2),
      ids(2, 2),
      ids(1, 4),
    ]);
    expect(ofKind(first, 'default')).toEqual([{ kind: 'default', payload: { after: 'doc-000004' } }]);
    expect(await run(job, ofKind(first, 'default')[0]!)).toEqual([
      { kind: 'batch-delete', payload: { ids: ids(2, 5) } },
      { kind: 'batch-delete', payload: { ids: ids(2, 7) } },
    ]);
    expect(await run(job, { kind: 'batch-delete', payload: { ids: ids(5) } })).toEqual([
      { kind: 'batch-delete', payload: { ids: ids(2, 3) } },
    ]);
    expect(settled).toEqual([ids(3)]);
    expect(events.map((e) => e.documentIds)).toEqual([['doc-000000', 'doc-000002']]);
  });
});

it('a batch delete of the largest allowed size stays far under the 400 KB DynamoDB item limit', () => {
  const uuids = Array.from({ length: MAX_BATCH_SIZE }, () => crypto.randomUUID());
  const bytes = Buffer.byteLength(
    JSON.stringify({ kind: 'batch-delete', payload: { documentType: 'x'.repeat(100), ids: uuids } }),
  );
  expect(bytes).toBeLessThan(100_000);
});
