import { type MoveRequest, moveMessages } from '../../../lib/distributor/mover';
import { type DistributorFixture, distributorFixture, tally } from './fixture';

describe('moveMessages (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  const move = (request: Partial<MoveRequest> & Pick<MoveRequest, 'source' | 'target' | 'count'>) =>
    moveMessages(() => f.session.openConfirmChannel(), {
      prefetch: 100,
      deadline: Date.now() + 30_000,
      idleStopMs: 300,
      publisherUser: 'guest',
      ...request,
    });

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

  it('stops at the deadline without losing what was in flight', async () => {
    await f.declare('late');
    await f.declare('late»/t');
    await f.publish('late»/t', 50, 'l');
    const result = await move({ source: 'late»/t', target: 'late', count: 50, deadline: Date.now() - 1 });
    expect(result.stopReason).toBe('deadline');
    expect([await f.depth('late'), await f.depth('late»/t')]).toEqual([result.moved, 50 - result.moved]);
  });
});
