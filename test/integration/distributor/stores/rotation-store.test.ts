import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoRotationStore } from '../../../../lib/distributor/stores/rotation-store';
import { FairwayError } from '../../../../lib/platform/errors';
import { type EmbeddedDynamo, startDynamo } from '../../../harness/dynamo';

describe('DynamoRotationStore (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  let state: DynamoRotationStore;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
    state = new DynamoRotationStore(dynamo.doc, 'DistributorStateTable');
  });
  afterAll(() => dynamo?.stop());

  it('the rotation cursor is written over the version read, and a stale writer loses', async () => {
    const empty = await state.readRotation('t5');
    expect(empty).toEqual({ cursor: undefined, version: 0 });
    expect(await state.writeRotation('t5', { cursor: 't5»/a' }, empty)).toBe(true);
    const read = await state.readRotation('t5');
    expect(read).toEqual({ cursor: 't5»/a', version: 1 });
    expect(await state.writeRotation('t5', { cursor: 't5»/b' }, read)).toBe(true);
    expect(await state.writeRotation('t5', { cursor: 't5»/c' }, read)).toBe(false);
    expect(await state.writeRotation('t5', { cursor: 't5»/c' }, empty)).toBe(false);
    expect(await state.readRotation('t5')).toEqual({ cursor: 't5»/b', version: 2 });
  });

  it('keeps the per-tenant cursors and the deficits (shares per tenant, fair by bytes)', async () => {
    const next = {
      cursor: 't7»/a',
      innerCursors: { 't7»/a': 't7»/a/w2' },
      deficits: { 't7»/a': 930.909, 't7»/b': -93.091 },
    };
    expect(await state.writeRotation('t7', next, await state.readRotation('t7'))).toBe(true);
    expect(await state.readRotation('t7')).toEqual({ ...next, version: 1 });
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
