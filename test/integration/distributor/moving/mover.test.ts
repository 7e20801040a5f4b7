import { testMove } from '../../../harness/distributor-move-messages';
import { type DistributorFixture, distributorFixture, tally } from '../fixture';

/** A move that ends cleanly: what it is, the messages staged, the move's share (and prefetch), what it moves, why it stops. */
type CleanMove = [
  what: string,
  staged: number,
  request: { count: number; prefetch?: number },
  moved: number,
  stopReason: string,
];

describe('moveMessages (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  const move = (request: Parameters<typeof testMove>[1]) => testMove(() => f.session.openConfirmChannel(), request);

  let made = 0;
  /**
   * A new target (with `targetArgs`; not declared when null) and its staging queue holding `count`
   * messages (ids `<prefix>-0…`): the pair as a move's source and target.
   */
  const staged = async (count: number, prefix: string, targetArgs: Record<string, unknown> | null = {}) => {
    const target = `mover-${made++}`;
    if (targetArgs) await f.declare(target, targetArgs);
    await f.declare(`${target}»/t`);
    await f.publish(`${target}»/t`, count, prefix);
    return { source: `${target}»/t`, target };
  };

  /** Nothing put back or parked; `moved` in the target, the rest still staged. */
  const movesCleanly = async (...[, staging, request, moved, stopReason]: CleanMove) => {
    const queues = await staged(staging, 'm');
    expect(await move({ ...queues, ...request })).toEqual({ moved, requeued: 0, parked: 0, stopReason });
    expect([await f.depth(queues.target), await f.depth(queues.source)]).toEqual([moved, staging - moved]);
  };

  it.each<CleanMove>([
    ['stops at the share and leaves the rest in staging', 300, { count: 120, prefetch: 50 }, 120, 'share-moved'],
    ['stops when the queue holds less than its share', 10, { count: 100 }, 10, 'source-drained'],
  ])('%s', movesCleanly);

  it('reports a missing staging queue', async () => {
    expect(await move({ source: 'nowhere»/t', target: 'nowhere', count: 5 })).toMatchObject({
      moved: 0,
      stopReason: 'source-missing',
      error: expect.stringMatching(/404|NOT_FOUND/),
    });
  });

  it('puts back what the target nacks (x-overflow reject-publish) and stops', async () => {
    const queues = await staged(40, 'r', { 'x-max-length': 5, 'x-overflow': 'reject-publish' });
    const result = await move({ ...queues, count: 40, prefetch: 10 });
    expect(result).toMatchObject({ moved: 5, stopReason: 'target-rejected' });
    expect(result.requeued).toBeGreaterThan(0);
    const ids = [...(await f.drain(queues.target)), ...(await f.drain(queues.source))];
    expect(tally(ids)).toMatchObject({ duplicates: 0 });
    expect(tally(ids).unique.size).toBe(40);
  });

  describe('a share of one or two messages (basic.get)', () => {
    it.each<CleanMove>([
      ['moves it, confirmed before the ack', 3, { count: 2 }, 2, 'share-moved'],
      ['stops on an empty queue', 0, { count: 1 }, 0, 'source-drained'],
    ])('%s', movesCleanly);

    it('puts back a message the broker returned (no such target)', async () => {
      const queues = await staged(1, 'gr', null);
      expect(await move({ ...queues, count: 1 })).toEqual({
        moved: 0,
        requeued: 1,
        parked: 0,
        stopReason: 'target-missing',
      });
      expect(await f.drain(queues.source)).toEqual(['gr-0']);
    });

    it('puts back a message the target nacked (x-overflow reject-publish) and stops', async () => {
      const queues = await staged(2, 'gf', { 'x-max-length': 1, 'x-overflow': 'reject-publish' });
      expect(await move({ ...queues, count: 2 })).toMatchObject({
        moved: 1,
        requeued: 1,
        stopReason: 'target-rejected',
      });
      expect([await f.drain(queues.target), await f.drain(queues.source)]).toEqual([['gf-0'], ['gf-1']]);
    });
  });

  it('stops at the deadline without losing what was in flight', async () => {
    const queues = await staged(50, 'l');
    const result = await move({ ...queues, count: 50, deadline: Date.now() - 1 });
    expect(result.stopReason).toBe('deadline');
    expect([await f.depth(queues.target), await f.depth(queues.source)]).toEqual([result.moved, 50 - result.moved]);
  });
});
