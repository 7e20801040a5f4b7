import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { createCleanupEngine } from '../../../../lib/cleanup/engine/engine';
import type { JobDefinition, Operation } from '../../../../lib/cleanup/engine/job-definition';
import { seededRandom } from '../../../../lib/cleanup/engine/random';
import { STATUS90_JOB } from '../../../../lib/cleanup/jobs/status90';
import { defaultNxrgNames } from '../../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/cleanup/nxrg/schema';
import type { DeletionEvent } from '../../../../lib/cleanup/report';
import { type CleanupTuning, cleanupJob } from '../../../../lib/wiring/cleanup';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';
import { dynamoItemBytes } from '../../../harness/dynamo-item-size';
import { createTestSchema, type TestSchema } from '../../../harness/postgres';

const TABLE = 'CleanupStackTable';
/** Issue 15: every item a cleanup stack holds is under 1 KB (DynamoDB bills writes per 1 KB). */
const ITEM_GOAL_BYTES = 1_024;
const BATCH_SIZE = 1_000;
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

// The status 90 job on its DynamoDB stack (dynalite) and a real registry, stepped by the engine.
describe('registry-status90-cleanup on its stack', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  const events: DeletionEvent[] = [];

  beforeAll(async () => {
    [dynamo, nxrg] = await Promise.all([startDynamo(), createTestSchema()]);
    await dynamo.createTables();
    await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), nxrg?.drop()]);
  });
  beforeEach(async () => {
    events.splice(0);
    await nxrg.pool.query('TRUNCATE documents, citizens, deleted_documents');
    await nxrg.pool.query(`INSERT INTO citizens VALUES ('0101010001', 90), ('0202020002', 90), ('0303030003', 1)`);
  });

  const job = (tuning: Partial<CleanupTuning> = {}) =>
    cleanupJob(
      STATUS90_JOB,
      {},
      // The job reads only NXRG.
      { nxrg: nxrg.pool, openxds: nxrg.pool },
      { deleted: (e) => events.push(e), dropped: () => undefined },
      tuning,
    );
  const engine = (definition: JobDefinition) =>
    createCleanupEngine(
      definition,
      { dryRun: false, maxAttempts: 3, leaseMs: 300_000, maxPayloadBytes: 350_000 },
      { doc: dynamo.doc, table: TABLE, random: seededRandom(1) },
    );

  /** The job's operations on the stack, as DynamoDB stores them. */
  async function operations(): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.doc.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :op)',
          ExpressionAttributeValues: { ':pk': STATUS90_JOB, ':op': 'op#' },
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  const documentsLeft = async () =>
    (
      await nxrg.pool.query<{ citizen: string; n: number }>(
        'SELECT citizen_id AS citizen, count(*)::int AS n FROM documents GROUP BY 1 ORDER BY 1',
      )
    ).rows;

  it('deletes more than one batch of a citizen’s documents holding only cursors on the stack, every item under 1 KB', async () => {
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       SELECT md5('doc' || i)::uuid, 'referral',
              CASE WHEN i <= 2500 THEN '0101010001' WHEN i <= 2505 THEN '0202020002' ELSE '0303030003' END,
              '2020-01-01'
       FROM generate_series(1, 2508) i`,
    );
    // One batch per step, so the rest of the citizen's 2.5 batches waits on the stack between steps.
    const stepper = engine(job({ status90BatchSize: BATCH_SIZE, maxDeletesPerStep: BATCH_SIZE }));
    let largest = 0;
    let waitingBatches = 0;
    const kinds = new Set<string>();
    for (let steps = 0; ; steps++) {
      expect(steps).toBeLessThan(200);
      expect(['supplied', 'executed']).toContain((await stepper.step()).outcome);
      const items = await operations();
      for (const item of items) {
        largest = Math.max(largest, dynamoItemBytes(item));
        kinds.add(String(item.kind));
        // A citizen batch part-way through its documents: more than one batch of one citizen range.
        if (item.kind === 'citizen-batch' && JSON.parse(String(item.payload)).documentsAfter !== null) waitingBatches++;
      }
      if (items.length === 0) break;
    }
    console.info(`largest ${STATUS90_JOB} stack item: ${largest} bytes`);
    expect(largest).toBeLessThan(ITEM_GOAL_BYTES);
    expect(waitingBatches).toBeGreaterThanOrEqual(2);
    expect([...kinds].sort()).toEqual(['citizen-batch', 'suffix']);
    expect(await documentsLeft()).toEqual([{ citizen: '0303030003', n: 3 }]);
    expect((await nxrg.pool.query('SELECT 1 FROM deleted_documents')).rows).toHaveLength(2_505);
  });

  it('deletes a citizen batch whose deceased citizens’ document ids interleave completely, each document once, in (citizen, id) order', async () => {
    const deceased = ['0101010001', '0404040001', '0505050001'];
    await nxrg.pool.query(`INSERT INTO citizens VALUES ('0404040001', 90), ('0505050001', 90), ('0606060001', 1)`);
    // Ids 1, 2, 3, … go round the four citizens of suffix 1: every citizen's ids interleave with the others'.
    const owners = [...deceased, '0606060001'];
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       SELECT unnest($1::uuid[]), 'referral', unnest($2::text[]), '2020-01-01'`,
      [Array.from({ length: 40 }, (_, i) => uuid(i + 1)), Array.from({ length: 40 }, (_, i) => owners[i % 4])],
    );
    const stepper = engine(job({ status90BatchSize: 4, maxDeletesPerStep: 8 }));
    for (let steps = 0; steps === 0 || (await operations()).length > 0; steps++) {
      expect(steps).toBeLessThan(100);
      await stepper.step();
    }
    const ranges = events.map((e) => e.documentIds).filter((ids) => ids.length > 0);
    const inOrder = deceased.flatMap((cpr) =>
      Array.from({ length: 40 }, (_, i) => i)
        .filter((i) => owners[i % 4] === cpr)
        .map((i) => uuid(i + 1)),
    );
    // Ranges of at most four documents, one after the other in (citizen, id) order.
    expect(ranges.flat()).toEqual(inOrder);
    expect(ranges.every((ids) => ids.length <= 4)).toBe(true);
    expect((await nxrg.pool.query('SELECT 1 FROM deleted_documents')).rows).toHaveLength(30);
    expect(await documentsLeft()).toEqual([{ citizen: '0606060001', n: 10 }]);
  });

  it('restarts from its start a citizen batch an earlier version left with a document-id cursor', async () => {
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at)
       SELECT unnest($1::uuid[]), 'referral', '0101010001', '2020-01-01'`,
      [[1, 2, 3, 4, 5, 6].map(uuid)],
    );
    // The earlier version's cursor is a document id: 1–3 were before it in id order.
    const current = job();
    const earlierVersion = fillingWith(current, {
      kind: 'citizen-batch',
      payload: { digit: '1', after: null, through: '0101010001', documentsAfter: uuid(3) },
    });
    expect(await engine(earlierVersion).step()).toMatchObject({ fill: true, outcome: 'supplied', children: 1 });
    expect(await engine(current).step()).toMatchObject({ kind: 'citizen-batch', outcome: 'executed' });
    expect(await operations()).toEqual([]);
    expect(events.flatMap((e) => e.documentIds).sort()).toEqual([1, 2, 3, 4, 5, 6].map(uuid));
    expect(await documentsLeft()).toEqual([]);
  });

  it('runs a batch-delete id list an earlier version left on the stack, re-checking status 90', async () => {
    await nxrg.pool.query(
      `INSERT INTO documents (id, document_type, citizen_id, created_at) VALUES
         ($1, 'referral', '0101010001', '2020-01-01'), ($2, 'referral', '0202020002', '2020-01-01'),
         ($3, 'referral', '0303030003', '2020-01-01')`,
      [uuid(1), uuid(2), uuid(3)],
    );
    // The earlier version's fill pushes an id list, as its citizen batches did.
    const current = job();
    const earlierVersion = fillingWith(current, {
      kind: 'batch-delete',
      payload: { ids: [uuid(1), uuid(2), uuid(3)] },
    });
    expect(await engine(earlierVersion).step()).toMatchObject({ fill: true, outcome: 'supplied', children: 1 });
    // Citizen 0101010001 is no longer deceased when the upgraded job deletes.
    await nxrg.pool.query(`UPDATE citizens SET status = 1 WHERE cpr = '0101010001'`);
    expect(await engine(current).step()).toMatchObject({ kind: 'batch-delete', outcome: 'executed' });
    expect(await operations()).toEqual([]);
    expect(events.map((e) => e.documentIds)).toEqual([[uuid(2)]]);
    expect(await documentsLeft()).toEqual([
      { citizen: '0101010001', n: 1 },
      { citizen: '0303030003', n: 1 },
    ]);
  });
});

/** `job` as an earlier version ran it: its fill pushes `operation`, as that version's suppliers did. */
function fillingWith(job: JobDefinition, operation: Operation): JobDefinition {
  return {
    ...job,
    kinds: { ...job.kinds, default: { payload: z.object({}), execute: async () => [operation] } },
  };
}
