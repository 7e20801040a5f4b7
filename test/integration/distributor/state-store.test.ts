import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDistributorState } from '../../../lib/distributor/state-store';
import { FairwayError } from '../../../lib/errors';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

describe('DynamoDistributorState (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let state: DynamoDistributorState;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    state = new DynamoDistributorState(dynamo.doc, 'DistributorStateTable');
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

  it('the rotation cursor is written over the version read, and a stale writer loses', async () => {
    const empty = await state.readRotation('t5');
    expect(empty).toEqual({ cursor: undefined, version: 0 });
    expect(await state.writeRotation('t5', 't5»/a', empty)).toBe(true);
    const read = await state.readRotation('t5');
    expect(read).toEqual({ cursor: 't5»/a', version: 1 });
    expect(await state.writeRotation('t5', 't5»/b', read)).toBe(true);
    expect(await state.writeRotation('t5', 't5»/c', read)).toBe(false);
    expect(await state.writeRotation('t5', 't5»/c', empty)).toBe(false);
    expect(await state.readRotation('t5')).toEqual({ cursor: 't5»/b', version: 2 });
  });

  it('a malformed rotation item is an error naming the item and the field, never coerced', async () => {
    await dynamo.doc.send(
      new PutCommand({ TableName: 'DistributorStateTable', Item: { pk: 'rotation#t6', cursor: 7, version: '2' } }),
    );
    const read = state.readRotation('t6');
    await expect(read).rejects.toThrow(FairwayError);
    await expect(state.readRotation('t6')).rejects.toThrow(/rotation#t6 .*cursor.*version/);
  });
});
