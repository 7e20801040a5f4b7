import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { WorkEvent } from '../../../lib/work-board/pass-trigger';
import { workRequester } from '../../../lib/work-board/requester';
import { WORK_BOARD_KEY } from '../../../lib/work-board/work-board';
import { DynamoWorkBoard } from '../../../lib/work-board/work-board-store';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

describe('workRequester (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
  });
  afterAll(() => dynamo?.stop());

  it('one start for a storm of batches; a failed start is withdrawn so the next batch starts one', async () => {
    const started: WorkEvent[] = [];
    let fail = true;
    const board = new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable');
    const requestWork = workRequester({
      board,
      trigger: {
        start: async (event) => {
          if (fail) throw new Error('Lambda unreachable');
          started.push(event);
        },
      },
      // Longer than the storm can take on a loaded machine: a lapsed mark would rightly start another.
      graceMs: 60_000,
    });
    await expect(requestWork(['a', 'b'])).rejects.toThrow('Lambda unreachable');
    expect((await board.read()).starting).toBeUndefined();
    fail = false;
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => requestWork([`t${i % 3}`])));
    expect(outcomes.filter((o) => o === 'started')).toHaveLength(1);
    expect(started).toEqual([{ source: 'fairway.work' }]);
    const { Item } = await dynamo.doc.send(
      new GetCommand({ TableName: 'DistributorStateTable', Key: { pk: WORK_BOARD_KEY } }),
    );
    // Every batch counted: the failed one and the 20.
    expect(Item?.version).toBe(21);
    expect(Item?.starting).toBeGreaterThan(Date.now());
  });
});
