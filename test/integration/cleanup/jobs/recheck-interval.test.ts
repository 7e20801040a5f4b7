import { BatchWriteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Pool } from 'pg';
import type { StepResult } from '../../../../lib/cleanup/engine/engine';
import { markKey } from '../../../../lib/cleanup/engine/keys';
import { StackStore } from '../../../../lib/cleanup/engine/stack-store';
import { REPOSITORY_JOB } from '../../../../lib/cleanup/jobs/repository';
import { createStepRunner } from '../../../../lib/cleanup/step-runner';
import { cleanupJob, loadStepSettings } from '../../../../lib/wiring/cleanup';
import { leftByEarlierVersion } from '../../../harness/cleanup-earlier-stack';
import { silentCleanupReport as report } from '../../../harness/cleanup-report';
import { type CleanupStores, startCleanupStores } from '../../../harness/cleanup-stores';
import type { EmbeddedDynamo } from '../../../harness/dynamo';
import type { TestSchema } from '../../../harness/postgres';

const TABLE = 'CleanupStackTable';
const T0 = Date.parse('2026-06-01T00:00:00Z');
const minutes = (n: number) => T0 + n * 60_000;
const uuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/**
 * Issue 15: the recheck of copies that re-appeared in OpenXDS read every deletion marked done on every
 * fill (about every minute when idle). It now runs at most once per recheck interval (60 minutes, fixed),
 * counted from the start of the last recheck that finished, and still finds a copy that came back.
 */
describe('repository-cleanup rechecks the done deletions once per interval (real PostgreSQL, dynalite)', () => {
  let stores: CleanupStores;
  let dynamo: EmbeddedDynamo;
  let nxrg: TestSchema;
  let openxds: TestSchema;
  /** While set, every OpenXDS lookup of the recheck fails (a step that dies mid-recheck). */
  let lookupsFail = false;
  let clock = T0;
  let runSteps: () => Promise<StepResult[]>;

  beforeAll(async () => {
    stores = await startCleanupStores();
    ({ dynamo, nxrg, openxds } = stores);
    // Pages of two done deletions, rounds of one: a recheck of six takes several steps.
    const job = cleanupJob(REPOSITORY_JOB, {}, { nxrg: nxrg.pool, openxds: openxdsPool() }, report, {
      repositoryPageSize: 2,
      repositoryBatchSize: 1,
    });
    const config = loadStepSettings(
      { CLEANUP_TABLE: TABLE, NXRG_DATABASE_URL: nxrg.url, OPENXDS_DATABASE_URL: openxds.url },
      { maxAttempts: 1 },
    );
    runSteps = createStepRunner(job, config, { doc: dynamo.doc, report, clock: () => clock });
  });
  afterAll(() => stores?.stop());
  beforeEach(async () => {
    lookupsFail = false;
    await Promise.all([clearPartition(REPOSITORY_JOB), clearPartition(`${REPOSITORY_JOB}#dead`)]);
    await nxrg.pool.query('TRUNCATE documents, deleted_documents');
    await openxds.pool.query('TRUNCATE repository_documents');
    // Deletions 1–6 done long ago, their copies gone from OpenXDS.
    await nxrg.pool.query(
      `INSERT INTO deleted_documents (document_id, deleted_at, reason, openxds_deleted_at)
       SELECT unnest($1::uuid[]), '2020-01-01', 'registry-timebased-cleanup', '2020-01-02'`,
      [[1, 2, 3, 4, 5, 6].map(uuid)],
    );
  });

  async function clearPartition(pk: string) {
    const { Items = [] } = await dynamo.doc.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      }),
    );
    for (let i = 0; i < Items.length; i += 25) {
      const requests = Items.slice(i, i + 25).map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } }));
      await dynamo.doc.send(new BatchWriteCommand({ RequestItems: { [TABLE]: requests } }));
    }
  }

  /** The OpenXDS pool, whose lookups (the recheck's `SELECT`s) fail while `lookupsFail` is set. */
  const openxdsPool = () =>
    new Proxy(openxds.pool, {
      get(pool, key) {
        if (key !== 'query') return Reflect.get(pool, key, pool);
        return (text: string, params: unknown[]) => {
          if (lookupsFail && text.trimStart().startsWith('SELECT')) {
            return Promise.reject(new Error('OpenXDS lookup failed'));
          }
          return pool.query(text, params);
        };
      },
    }) as Pool;

  const operationsLeft = async () => {
    const { Items = [] } = await dynamo.doc.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :op)',
        ExpressionAttributeValues: { ':pk': REPOSITORY_JOB, ':op': 'op#' },
      }),
    );
    return Items.length;
  };

  /** At `at`, one invocation after another (a step each) until the stack is empty again; the steps' results. */
  async function untilEmpty(at: number): Promise<StepResult[]> {
    clock = at;
    const steps: StepResult[] = [];
    do {
      if (steps.length > 100) throw new Error('the stack did not empty in 100 steps');
      steps.push(...(await runSteps()));
    } while ((await operationsLeft()) > 0);
    return steps;
  }
  /** One fill at `at` and every step until the stack is empty; the kinds that ran, in order. */
  async function fillAndRun(at: number): Promise<string[]> {
    const steps = await untilEmpty(at);
    expect(steps[0]).toMatchObject({ fill: true });
    return steps.map((step) => step.kind ?? '');
  }

  const recheckMark = async () => {
    const { Item } = await dynamo.doc.send(
      new GetCommand({ TableName: TABLE, Key: { pk: REPOSITORY_JOB, sk: markKey('recheck') }, ConsistentRead: true }),
    );
    return Item && new Date(Item.at as number).toISOString();
  };
  const stored = async () =>
    (
      await openxds.pool.query<{ id: string }>('SELECT document_id::text AS id FROM repository_documents ORDER BY 1')
    ).rows.map((r) => r.id);
  const copyBack = (n: number) => openxds.pool.query('INSERT INTO repository_documents VALUES ($1)', [uuid(n)]);

  it('a second fill within the interval reads no done deletions; the first fill after it finds a copy back meanwhile', async () => {
    const first = await fillAndRun(T0);
    expect(first.filter((kind) => kind === 'recheck')).toHaveLength(4);

    // Copy 3 comes back; a new deletion (7) is recorded, its copy in OpenXDS.
    await copyBack(3);
    await nxrg.pool.query(`INSERT INTO deleted_documents (document_id, deleted_at, reason) VALUES ($1, now(), 'x')`, [
      uuid(7),
    ]);
    await copyBack(7);
    // Fills within the hour settle the new deletion but read no done ones.
    expect(await fillAndRun(minutes(1))).toEqual(['default', 'settle']);
    expect(await fillAndRun(minutes(59))).toEqual(['default']);
    expect(await stored()).toEqual([uuid(3)]);
    // The first fill's pass finished with a recheck-done, which recorded when it started.
    expect(first.at(-1)).toBe('recheck-done');
    expect(await recheckMark()).toBe(new Date(T0).toISOString());

    // The first fill an hour after the last recheck started rechecks, and deletes copy 3 again.
    const due = await fillAndRun(minutes(60));
    expect(due).toContain('recheck');
    expect(due).toContain('resettle');
    expect(await stored()).toEqual([]);
    expect(await recheckMark()).toBe(new Date(minutes(60)).toISOString());
  });

  it('a recheck that died on the way does not count: the next fill rechecks again and finds the copy', async () => {
    await fillAndRun(T0);
    // Copy 5 comes back; the next recheck dies after its first page (1–2), before reaching it.
    await copyBack(5);
    clock = minutes(61);
    const [fill] = await runSteps();
    expect(fill).toMatchObject({ fill: true, children: 1 });
    expect((await runSteps())[0]).toMatchObject({ kind: 'recheck', outcome: 'supplied' });
    lookupsFail = true;
    const died = await untilEmpty(minutes(62));
    expect(died.map((step) => [step.kind, step.outcome])).toEqual([['recheck', 'dead-lettered']]);
    expect(await recheckMark()).toBe(new Date(T0).toISOString());
    expect(await stored()).toEqual([uuid(5)]);

    // Within the interval of that unfinished pass's start, a fill still rechecks: the last finished one is T0's.
    lookupsFail = false;
    expect(await fillAndRun(minutes(63))).toContain('recheck-done');
    expect(await stored()).toEqual([]);
    expect(await recheckMark()).toBe(new Date(minutes(63)).toISOString());
  });

  it('runs a recheck an earlier version left on the stack, whose pass (without a start) does not count as finished', async () => {
    await copyBack(2);
    await leftByEarlierVersion(dynamo.doc, TABLE, REPOSITORY_JOB, { kind: 'recheck', payload: { after: null } });
    const legacy = await untilEmpty(T0);
    expect(legacy.map((step) => step.kind)).not.toContain('recheck-done');
    expect(legacy.map((step) => step.kind)).toContain('resettle');
    expect(await stored()).toEqual([]);
    expect(await recheckMark()).toBeUndefined();
    // So the first fill of the upgraded job rechecks in full.
    expect(await fillAndRun(minutes(1))).toContain('recheck-done');
    expect(await recheckMark()).toBe(new Date(minutes(1)).toISOString());
  });

  it('keeps the latest start when passes record theirs concurrently or late', async () => {
    const store = new StackStore(dynamo.doc, TABLE, REPOSITORY_JOB);
    await Promise.all([store.marks.advance('recheck', minutes(120)), store.marks.advance('recheck', minutes(60))]);
    expect(await store.marks.get('recheck')).toBe(minutes(120));
    await store.marks.advance('recheck', minutes(90));
    expect(await store.marks.get('recheck')).toBe(minutes(120));
    expect(await store.marks.get('recheck-dry-run')).toBeUndefined();
  });
});
