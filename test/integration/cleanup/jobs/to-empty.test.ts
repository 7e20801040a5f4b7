import type { JobDefinition } from '../../../../lib/cleanup/engine/job-definition';
import type { CleanupJobName, JobDatabases } from '../../../../lib/cleanup/jobs';
import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { STATUS90_JOB } from '../../../../lib/cleanup/jobs/status90';
import { TIMEBASED_JOB } from '../../../../lib/cleanup/jobs/timebased';
import type { DeletionEvent, JobReport } from '../../../../lib/cleanup/report';
import { cleanupJob } from '../../../../lib/wiring/cleanup';
import { DEFAULT_DOCUMENT_TYPES, generateRegistry } from '../../../harness/cleanup-registry';
import {
  allDocumentIds,
  deceasedDocumentIds,
  expiredDocumentIds,
  idDiff,
  type OracleRule,
  repositoryDeletableIds,
  repositoryIds,
} from '../../../harness/cleanup-registry-oracle';
import { stepToEmpty } from '../../../harness/cleanup-step-to-empty';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const RULES: OracleRule[] = [
  { documentType: 'referral', retentionDays: 3650, basis: 'created' },
  { documentType: 'lab-result', retentionDays: 1825, basis: 'service' },
  { documentType: 'discharge-letter', retentionDays: 5475, basis: 'created' },
];
const ENV = {
  NXRG_DOCUMENT_TYPES: DEFAULT_DOCUMENT_TYPES.join(','),
  CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({
    referral: { retentionDays: 3650 },
    'lab-result': { retentionDays: 1825, basis: 'service', batchSize: 500 },
    'discharge-letter': { retentionDays: 5475 },
  }),
};
/** Sizes far below the fixed ones, so that 100,000 documents take many pages, batches and steps. */
const TUNING = {
  timebasedBatchSize: 1000,
  status90SuffixPageSize: 300,
  status90CitizenBatchSize: 100,
  status90BatchSize: 400,
  repositoryPageSize: 10000,
  repositoryBatchSize: 2000,
  maxDeletesPerStep: 1500,
};
const SIZES = { seed: 'acceptance', documents: 100_000, citizens: 5_000, now: NOW };

/** Collects what the jobs report deleting (or counting, in a dry run). */
function collector() {
  const events: DeletionEvent[] = [];
  const report: JobReport = { deleted: (e) => events.push(e), dropped: () => undefined };
  const deleted = () => events.flatMap((e) => e.documentIds).sort();
  return { report, events, deleted };
}

interface Registry {
  nxrg: TestSchema;
  openxds: TestSchema;
  databases: JobDatabases;
}

async function registry(): Promise<Registry> {
  const [nxrg, openxds] = await Promise.all([createTestSchema(), createTestSchema()]);
  await generateRegistry(nxrg.pool, openxds.pool, SIZES);
  return { nxrg, openxds, databases: { nxrg: nxrg.pool, openxds: openxds.pool } };
}

/** `actual` holds exactly the ids of `expected`, each once. */
const expectSameIds = (actual: readonly string[], expected: readonly string[]) =>
  expect(idDiff(actual, expected)).toEqual({ size: expected.length, missing: [], extra: [] });

const minus = (all: string[], gone: string[]) => {
  const g = new Set(gone);
  return all.filter((id) => !g.has(id));
};

describe('cleanup jobs stepped through the engine on dynalite to an empty stack, on a generated registry (100,000 documents, 5,000 citizens)', () => {
  let dynamo: EmbeddedDynamo;
  let single: Registry;
  let concurrent: Registry;

  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    [single, concurrent] = await Promise.all([registry(), registry()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([
      dynamo?.stop(),
      single?.nxrg.drop(),
      single?.openxds.drop(),
      concurrent?.nxrg.drop(),
      concurrent?.openxds.drop(),
    ]);
  });

  const step = (job: JobDefinition, dryRun: boolean, steppers: number) =>
    stepToEmpty(job, { doc: dynamo.doc, table: 'CleanupStackTable', dryRun, now: NOW, steppers });

  /** Dry run, then real run, of one job: checks both against `expected` and that the dry run changed nothing. */
  async function dryThenReal(r: Registry, jobName: CleanupJobName, expected: string[], steppers: number) {
    const before = { nxrg: await allDocumentIds(r.nxrg.pool), openxds: await repositoryIds(r.openxds.pool) };
    const dry = collector();
    await step(cleanupJob(jobName, ENV, r.databases, dry.report, TUNING), true, steppers);
    expectSameIds(await allDocumentIds(r.nxrg.pool), before.nxrg);
    expectSameIds(await repositoryIds(r.openxds.pool), before.openxds);
    expectSameIds(dry.deleted(), expected);

    const real = collector();
    const outcomes = await step(cleanupJob(jobName, ENV, r.databases, real.report, TUNING), false, steppers);
    console.info(`${jobName}, ${steppers} stepper(s): ${JSON.stringify(outcomes)}`);
    expectSameIds(real.deleted(), expected);
    expect(real.events.every((e) => e.documentIds.length <= 1500)).toBe(true);
    return before;
  }

  it.each([
    ['one stepper', () => single, 1],
    ['four concurrent steppers', () => concurrent, 4],
  ])(
    'deletes exactly what the SQL oracle names, job after job (%s)',
    async (_label, get, steppers) => {
      const r = get();
      const { nxrg, openxds } = r;

      const expired = await expiredDocumentIds(nxrg.pool, RULES, NOW);
      expect(expired.length).toBeGreaterThan(10_000);
      const before = await dryThenReal(r, TIMEBASED_JOB, expired, steppers);
      expectSameIds(await allDocumentIds(nxrg.pool), minus(before.nxrg, expired));

      const deceased = await deceasedDocumentIds(nxrg.pool);
      expect(deceased.length).toBeGreaterThan(5_000);
      await dryThenReal(r, STATUS90_JOB, deceased, steppers);
      expectSameIds(await allDocumentIds(nxrg.pool), minus(before.nxrg, [...expired, ...deceased]));

      // Every NXRG deletion left its record, pending for OpenXDS.
      const { rows: recorded } = await nxrg.pool.query<{ id: string }>(
        `SELECT document_id::text AS id FROM deleted_documents WHERE reason <> 'earlier' AND openxds_deleted_at IS NULL`,
      );
      expectSameIds(recorded.map((x) => x.id).sort(), [...expired, ...deceased].sort());

      const deletable = await repositoryDeletableIds(nxrg.pool, openxds.pool);
      expect(deletable.length).toBe(expired.length + deceased.length + SIZES.documents / 100);
      await dryThenReal(r, REPOSITORY_JOB, deletable, steppers);
      expectSameIds(await repositoryIds(openxds.pool), minus(before.openxds, deletable));
      const { rows: pending } = await nxrg.pool.query(
        'SELECT 1 FROM deleted_documents WHERE openxds_deleted_at IS NULL',
      );
      expect(pending).toHaveLength(0);
    },
    300_000,
  );

  it('four concurrent steppers reach the same end state as one', async () => {
    expectSameIds(await allDocumentIds(concurrent.nxrg.pool), await allDocumentIds(single.nxrg.pool));
    expectSameIds(await repositoryIds(concurrent.openxds.pool), await repositoryIds(single.openxds.pool));
    const records = (r: Registry) =>
      r.nxrg.pool
        .query<{ id: string; reason: string }>(
          'SELECT document_id::text AS id, reason FROM deleted_documents ORDER BY document_id',
        )
        .then((x) => x.rows);
    expect(await records(concurrent)).toEqual(await records(single));
  });
});
