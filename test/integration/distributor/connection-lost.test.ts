import { eventually } from '../../harness/eventually';
import { type DistributorFixture, distributorFixture, tally } from './fixture';

describe('the connection closed by the broker during a pass', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  it('ends the pass without losing a message', async () => {
    // Enough that the pass is still moving while the management API catches up with its connection.
    const total = 2 * 20_000;
    const staging = await f.stage('cut', {}, { 'cut»/a': total / 2, 'cut»/b': total / 2 });
    const settings = { DISTRIBUTOR_TARGETS: JSON.stringify({ cut: { maxLength: 1_000_000 } }) };
    const pass = f.distributor(settings).runPass(60_000);

    await eventually(
      async () => ((await f.depth('cut')) >= 2_000 ? true : undefined),
      'the pass to start filling the target',
      30_000,
    );
    // As a broker restart would: every connection of the vhost goes (the test's own reconnects for the checks below).
    // The management API lists a new connection once its events are processed, which lags on a loaded broker.
    const connections = await eventually(async () => {
      const listed = await f.rabbit.api<{ name: string }[]>(
        'GET',
        `/api/vhosts/${encodeURIComponent(f.rabbit.vhost)}/connections?columns=name`,
      );
      return listed.length > 0 ? listed : undefined;
    }, "the pass's connection in the management API's listing");
    for (const c of connections) await f.rabbit.api('DELETE', `/api/connections/${encodeURIComponent(c.name)}`);
    const summary = await pass;

    const target = summary.targets[0]!;
    expect(target.queues.every((q) => q.stopReason === 'channel-closed' || q.stopReason === 'share-moved')).toBe(true);
    expect(target.moved).toBeLessThan(total);
    // Issue 12 item 7: a pass cut short says so at WARN, naming the queues whose moves it ended.
    const cutShort = target.queues.filter((q) => q.stopReason === 'channel-closed').map((q) => q.name);
    expect(cutShort.length).toBeGreaterThan(0);
    expect(f.warnings).toContainEqual({
      message: expect.stringMatching(/channel or connection closed/),
      details: expect.objectContaining({ target: 'cut', queues: cutShort }),
    });
    const all = tally([...(await f.drain('cut')), ...(await Promise.all(staging.map(f.drain))).flat()]);
    expect(all.unique.size).toBe(total);
  });
});
