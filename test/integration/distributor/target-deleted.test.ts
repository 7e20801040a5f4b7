import { eventually } from '../../harness/eventually';
import { type DistributorFixture, distributorFixture, tally } from './fixture';

describe('a target deleted during a pass', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  it('loses nothing: what was confirmed went down with the queue, the rest is back in staging', async () => {
    const total = 2 * 10_000;
    const staging = await f.stage('gone', {}, { 'gone»/a': total / 2, 'gone»/b': total / 2 });

    // Watch what the broker hands back: every returned message must end up back in staging.
    const returned = new Set<string>();
    const watchedChannel = async () => {
      const channel = await f.session.openConfirmChannel();
      channel.on('return', (message: { properties: { messageId: string } }) =>
        returned.add(message.properties.messageId),
      );
      return channel;
    };
    const settings = { DISTRIBUTOR_TARGETS: JSON.stringify({ gone: { maxLength: 1_000_000 } }) };
    const pass = f.distributor(settings, watchedChannel).runPass(60_000);
    await eventually(
      async () => ((await f.depth('gone')) >= 2_000 ? true : undefined),
      'the pass to start filling the target',
      30_000,
    );
    const { messageCount: deletedWithTarget } = await f.withChannel((channel) => channel.deleteQueue('gone'));
    const summary = await pass;

    const target = summary.targets[0]!;
    expect(target.queues.some((q) => q.stopReason === 'target-missing')).toBe(true);
    expect(target.moved).toBeLessThan(total);
    // A closed mover channel's unacked messages go back to staging inside the broker, after the pass
    // returns (suspected on RabbitMQ 4.0: a depth read answered first): drain once all of them are ready again.
    // A lost message keeps the sum short and fails here, naming what is missing.
    await eventually(
      async () => {
        const ready = await Promise.all(staging.map(f.depth));
        return ready.reduce((sum, depth) => sum + depth, 0) + target.moved >= total || undefined;
      },
      `staging to hold every message the pass did not confirm into the target (${total} - ${target.moved})`,
      30_000,
    );
    const left = tally((await Promise.all(staging.map(f.drain))).flat());
    expect(left.duplicates).toBe(0);
    // Every message is back in staging or was confirmed by the broker into the target before it went.
    expect(left.unique.size + target.moved).toBe(total);
    expect(returned.size).toBeGreaterThan(0);
    expect(target.requeued).toBe(returned.size);
    expect([...returned].filter((id) => !left.unique.has(id))).toEqual([]);
    // The broker also confirms messages routed to a queue while it is being deleted: they go with it,
    // so the deleted queue's count can be lower than what was confirmed, by at most the messages in flight.
    expect(deletedWithTarget).toBeLessThanOrEqual(target.moved);
    expect(target.moved - deletedWithTarget).toBeLessThanOrEqual(2 * 500);
  });
});
