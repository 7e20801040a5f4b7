import { testMove } from '../../../harness/distributor-move-messages';
import { type DistributorFixture, distributorFixture } from '../fixture';

describe('moveMessages to a target that does not exist (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  it('does not ack a message the broker returned as unroutable: it goes back to staging', async () => {
    await f.declare('gone»/t');
    await f.publish('gone»/t', 5, 'g');

    // The broker returns each publish (no queue "gone") and then confirms it: a confirm alone is not delivery.
    const result = await testMove(() => f.session.openConfirmChannel(), {
      source: 'gone»/t',
      target: 'gone',
      count: 5,
      prefetch: 1,
    });

    expect(result).toEqual({ moved: 0, requeued: 1, parked: 0, stopReason: 'target-missing' });
    expect((await f.drain('gone»/t')).sort()).toEqual(['g-0', 'g-1', 'g-2', 'g-3', 'g-4']);
  });
});
