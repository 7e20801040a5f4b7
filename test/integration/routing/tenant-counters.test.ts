import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { FairwayError } from '../../../lib/platform/errors';
import { DynamoTenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { checks, defaultRules } from '../../../lib/routing/priority/rules';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

const table = 'TenantCountersTable';
const t0 = Date.UTC(2026, 0, 1);

describe('DynamoDB tenant counters', () => {
  let dynamo: EmbeddedDynamo;
  let store: DynamoTenantCounterStore;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    store = new DynamoTenantCounterStore(dynamo.doc, table, defaultRules);
  });
  afterAll(() => dynamo?.stop());

  const item = async (tenant: string) =>
    (await dynamo.doc.send(new GetCommand({ TableName: table, Key: { pk: tenant }, ConsistentRead: true }))).Item;

  it('applies SPEC §1 checks to a stored counter: start, decrement, no reset at 1500 s, reset after', async () => {
    expect(await store.check('a', 1, t0)).toMatchObject({ counts: [0], levels: [1] });
    expect(await store.check('a', 3, t0 + 1000)).toMatchObject({ counts: [-1, -2, -3], levels: [1, 1, 2] });
    expect(await item('a')).toEqual({ pk: 'a', pendingCount: -3, lastUpdateMs: t0 + 1000 });
    expect(await store.check('a', 1, t0 + 1000 + 1_500_000)).toMatchObject({ counts: [-4], levels: [2] });
    expect(await store.check('a', 2, t0 + 1000 + 3_000_001)).toMatchObject({ counts: [0, -1], levels: [1, 1] });
    expect(await item('a')).toEqual({ pk: 'a', pendingCount: -1, lastUpdateMs: t0 + 1000 + 3_000_001 });
  });

  it('resets an expired tenant only once when two invocations both saw it expired', async () => {
    await dynamo.doc.send(new PutCommand({ TableName: table, Item: { pk: 'b', pendingCount: -30, lastUpdateMs: t0 } }));
    const later = t0 + 2_000_000;
    const results = await Promise.all([store.check('b', 1, later), store.check('b', 1, later)]);
    expect(results.flatMap((r) => r.counts).sort()).toEqual([-1, 0]);
    expect((await item('b'))?.pendingCount).toBe(-1);
  });

  it('loses no update: 8 concurrent checkers × 250 checks on one fresh tenant', async () => {
    const perChecker = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const seen: { count: number; level: number }[] = [];
        for (let i = 0; i < 250; i++) {
          const { counts, levels } = await store.check('busy', 1, t0);
          seen.push({ count: counts[0]!, level: levels[0]! });
        }
        return seen;
      }),
    );
    const all = perChecker.flat();
    expect((await item('busy'))?.pendingCount).toBe(-1999);
    // Each check saw a count no other check saw: exactly 0, -1, …, -1999.
    expect(all.map((s) => s.count).sort((x, y) => y - x)).toEqual(Array.from({ length: 2000 }, (_, i) => -i || 0));
    // The levels are those of 2000 sequential checks.
    const replay = checks(undefined, t0, 2000, defaultRules).levels;
    expect(all.map((s) => s.level).sort()).toEqual([...replay].sort());
    // Each checker's own counts only go down.
    for (const seen of perChecker)
      expect(seen.map((s) => s.count)).toEqual([...seen.map((s) => s.count)].sort((x, y) => y - x));
  }, 300_000); // CPU-bound: 47 s beside other files and two CPU hogs

  it('gives up with an error naming the tenant when every conditional write keeps failing', async () => {
    // A real table cannot be made to change under every attempt on demand; this client always conflicts.
    const sent: string[] = [];
    const conflicting = {
      send: async (command: object) => {
        sent.push(command.constructor.name);
        throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
      },
    } as unknown as DynamoDBDocumentClient;
    const pauses: number[] = [];
    const flaky = new DynamoTenantCounterStore(
      conflicting,
      table,
      defaultRules,
      { maxAttempts: 3, baseDelayMs: 4 },
      async (ms) => {
        pauses.push(ms);
      },
    );
    await expect(flaky.check('c', 1, t0)).rejects.toThrow('Tenant counter of "c" kept changing under 3 attempts');
    expect(sent).toEqual(['UpdateCommand', 'PutCommand', 'UpdateCommand', 'PutCommand', 'UpdateCommand', 'PutCommand']);
    expect(pauses).toHaveLength(2);
    expect(pauses.every((ms, i) => ms >= 0 && ms <= 4 * 2 ** (i + 1))).toBe(true);
  });

  it('lists counters as typed records, and refuses one it cannot read, naming the field and never the value', async () => {
    await store.check('listed', 2, t0);
    expect((await store.list()).find((c) => c.tenantId === 'listed')).toEqual({
      tenantId: 'listed',
      count: -1,
      lastUpdateMs: t0,
    });
    // Written by hand or by another tool: the operator view once showed such a count as NaN.
    await dynamo.doc.send(
      new PutCommand({ TableName: table, Item: { pk: 'typo', pendingCount: 'minus-seven', lastUpdateMs: t0 } }),
    );
    const listed = store.list();
    await expect(listed).rejects.toThrow(FairwayError);
    await expect(listed).rejects.toThrow(/TenantCountersTable .*pendingCount/);
    await expect(listed).rejects.not.toThrow(/minus-seven/);
    expect(await store.forget('typo')).toBe(true);
    expect(await store.forget('typo')).toBe(false);
  });
});
