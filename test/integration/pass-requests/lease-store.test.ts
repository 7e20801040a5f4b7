import { DynamoLeaseStore } from '../../../lib/pass-requests/lease-store';
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

  it('a request starts a pass only when no pass holds or awaits the lease; a holder learns of requests at release', async () => {
    expect(await state.requestPass('r1', 'req-1', 1_000, 2_000)).toBe('start');
    expect(await state.requestPass('r1', 'req-2', 1_500, 2_500)).toBe('pending'); // req-1's pass is on its way
    expect(await state.acquireLease('r1', 'pass-1', 1_600, 9_000, 'req-1')).toBe(true); // it clears its own mark
    expect(await state.requestPass('r1', 'req-3', 1_700, 2_700)).toBe('wanted');
    expect(await state.requestPass('r1', 'req-4', 1_800, 2_800)).toBe('wanted');
    expect(await state.releaseLease('r1', 'pass-1')).toEqual({ wanted: true });
    expect(await state.requestPass('r1', 'req-5', 1_900, 2_900)).toBe('start');
    // A pass that is not the request's (the schedule's) leaves the mark: the requested one still comes.
    expect(await state.acquireLease('r1', 'scheduled', 2_000, 9_000)).toBe(true);
    expect(await state.releaseLease('r1', 'scheduled')).toEqual({ wanted: false });
    expect(await state.requestPass('r1', 'req-6', 2_100, 3_100)).toBe('pending');
    // Overdue (its pass was lost): the next request starts another.
    expect(await state.requestPass('r1', 'req-7', 3_000, 4_000)).toBe('start');
  });

  it('a requested pass that finds the lease held hands its request over; a dropped request frees the way', async () => {
    expect(await state.requestPass('r2', 'req-1', 1_000, 2_000)).toBe('start');
    expect(await state.acquireLease('r2', 'scheduled', 1_100, 9_000)).toBe(true);
    expect(await state.acquireLease('r2', 'requested', 1_200, 9_000, 'req-1')).toBe(false);
    expect(await state.handOver('r2', 'req-1', 1_200)).toBe(true);
    expect(await state.requestPass('r2', 'req-2', 1_300, 2_300)).toBe('wanted');
    expect(await state.releaseLease('r2', 'scheduled')).toEqual({ wanted: true });
    // Hand-over needs a live lease: once it is free, the requested pass takes it itself.
    expect(await state.requestPass('r2', 'req-3', 1_400, 2_400)).toBe('start');
    expect(await state.handOver('r2', 'req-3', 1_500)).toBe(false);
    await state.dropRequest('r2', 'req-3');
    expect(await state.requestPass('r2', 'req-4', 1_600, 2_600)).toBe('start');
  });

  it('of concurrent requests on a free target exactly one starts a pass', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => state.requestPass('r3', `req-${i}`, 1_000, 60_000)),
    );
    expect(outcomes.filter((o) => o === 'start')).toHaveLength(1);
  });
});
