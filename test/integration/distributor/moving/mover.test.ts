import { testMove } from '../../../harness/distributor-move-messages';
import { type DistributorFixture, distributorFixture, tally } from '../fixture';

describe('moveMessages (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  const move = (request: Parameters<typeof testMove>[1]) => testMove(() => f.session.openConfirmChannel(), request);

  it('stops at the share and leaves the rest in staging', async () => {
    await f.declare('share');
    await f.declare('share»/t');
    await f.publish('share»/t', 300, 's');
    expect(await move({ source: 'share»/t', target: 'share', count: 120, prefetch: 50 })).toEqual({
      moved: 120,
      requeued: 0,
      parked: 0,
      stopReason: 'share-moved',
    });
    expect([await f.depth('share'), await f.depth('share»/t')]).toEqual([120, 180]);
  });

  it('stops when the queue holds less than its share', async () => {
    await f.declare('drained');
    await f.declare('drained»/t');
    await f.publish('drained»/t', 10, 'd');
    expect(await move({ source: 'drained»/t', target: 'drained', count: 100 })).toEqual({
      moved: 10,
      requeued: 0,
      parked: 0,
      stopReason: 'source-drained',
    });
  });

  it('reports a missing staging queue', async () => {
    expect(await move({ source: 'nowhere»/t', target: 'nowhere', count: 5 })).toMatchObject({
      moved: 0,
      stopReason: 'source-missing',
      error: expect.stringMatching(/404|NOT_FOUND/),
    });
  });

  it('puts back what the target nacks (x-overflow reject-publish) and stops', async () => {
    await f.declare('strict', { 'x-max-length': 5, 'x-overflow': 'reject-publish' });
    await f.declare('strict»/t');
    await f.publish('strict»/t', 40, 'r');
    const result = await move({ source: 'strict»/t', target: 'strict', count: 40, prefetch: 10 });
    expect(result).toMatchObject({ moved: 5, stopReason: 'target-rejected' });
    expect(result.requeued).toBeGreaterThan(0);
    const ids = [...(await f.drain('strict')), ...(await f.drain('strict»/t'))];
    expect(tally(ids)).toMatchObject({ duplicates: 0 });
    expect(tally(ids).unique.size).toBe(40);
  });

  describe('a share of one or two messages (basic.get)', () => {
    it('moves it, confirmed before the ack', async () => {
      await f.declare('get');
      await f.declare('get»/t');
      await f.publish('get»/t', 3, 'g');
      expect(await move({ source: 'get»/t', target: 'get', count: 2 })).toEqual({
        moved: 2,
        requeued: 0,
        parked: 0,
        stopReason: 'share-moved',
      });
      expect([await f.depth('get'), await f.depth('get»/t')]).toEqual([2, 1]);
    });

    it('puts back a message the broker returned (no such target)', async () => {
      await f.declare('get-returned»/t');
      await f.publish('get-returned»/t', 1, 'gr');
      expect(await move({ source: 'get-returned»/t', target: 'get-returned', count: 1 })).toEqual({
        moved: 0,
        requeued: 1,
        parked: 0,
        stopReason: 'target-missing',
      });
      expect(await f.drain('get-returned»/t')).toEqual(['gr-0']);
    });

    it('puts back a message the target nacked (x-overflow reject-publish) and stops', async () => {
      await f.declare('get-full', { 'x-max-length': 1, 'x-overflow': 'reject-publish' });
      await f.declare('get-full»/t');
      await f.publish('get-full»/t', 2, 'gf');
      expect(await move({ source: 'get-full»/t', target: 'get-full', count: 2 })).toMatchObject({
        moved: 1,
        requeued: 1,
        stopReason: 'target-rejected',
      });
      expect([await f.drain('get-full'), await f.drain('get-full»/t')]).toEqual([['gf-0'], ['gf-1']]);
    });

    it('stops on an empty queue', async () => {
      await f.declare('get-empty');
      await f.declare('get-empty»/t');
      expect(await move({ source: 'get-empty»/t', target: 'get-empty', count: 1 })).toEqual({
        moved: 0,
        requeued: 0,
        parked: 0,
        stopReason: 'source-drained',
      });
    });
  });

  it('stops at the deadline without losing what was in flight', async () => {
    await f.declare('late');
    await f.declare('late»/t');
    await f.publish('late»/t', 50, 'l');
    const result = await move({ source: 'late»/t', target: 'late', count: 50, deadline: Date.now() - 1 });
    expect(result.stopReason).toBe('deadline');
    expect([await f.depth('late'), await f.depth('late»/t')]).toEqual([result.moved, 50 - result.moved]);
  });
});
