import { DynamoLeaseStore } from '../../../lib/distributor/stores/lease-store';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

describe('DynamoLeaseStore (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let state: DynamoLeaseStore;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    state = new DynamoLeaseStore(dynamo.doc, 'DistributorStateTable');
  });
  afterAll(() => dynamo?.stop());

  it('a lease is held by one owner until it expires or is released', async () => {
    expect(await state.acquireLease('t1', 'pass-a', 1_000, 5_000)).toBe(true);
    expect(await state.acquireLease('t1', 'pass-b', 2_000, 6_000)).toBe(false);
    expect(await state.acquireLease('t2', 'pass-b', 2_000, 6_000)).toBe(true); // leases are per target
    expect(await state.acquireLease('t1', 'pass-b', 5_000, 9_000)).toBe(false); // not yet expired at its expiry
    expect(await state.acquireLease('t1', 'pass-b', 5_001, 9_000)).toBe(true); // taken over once expired
  });

  it('only the owner releases a lease', async () => {
    expect(await state.acquireLease('t3', 'pass-a', 1_000, 5_000)).toBe(true);
    await state.releaseLease('t3', 'pass-b');
    expect(await state.acquireLease('t3', 'pass-c', 2_000, 6_000)).toBe(false);
    await state.releaseLease('t3', 'pass-a');
    expect(await state.acquireLease('t3', 'pass-c', 2_000, 6_000)).toBe(true);
  });

  it('of concurrent lease requests on one target exactly one wins', async () => {
    const wins = await Promise.all(
      Array.from({ length: 10 }, (_, i) => state.acquireLease('t4', `pass-${i}`, 1_000, 60_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
  });
});
