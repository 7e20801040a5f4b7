import { eventually } from '../../harness/eventually';
import { type DistributorFixture, distributorFixture, tally } from './fixture';

describe('the connection closed by the broker during a pass', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  it('ends the pass without losing a message', async () => {
    const total = 2 * 10_000;
    const staging = await f.stage('cut', {}, { 'cut»/a': total / 2, 'cut»/b': total / 2 });
    const settings = { DISTRIBUTOR_TARGETS: JSON.stringify({ cut: { maxLength: 1_000_000 } }) };
    const pass = f.distributor(settings).runPass(60_000);

    await eventually(
      async () => ((await f.depth('cut')) >= 2_000 ? true : undefined),
      'the pass to start filling the target',
      30_000,
    );
    // As a broker restart would: every connection of the vhost goes (the test's own reconnects for the checks below).
    const connections = await f.rabbit.api<{ name: string }[]>(
      'GET',
      `/api/vhosts/${encodeURIComponent(f.rabbit.vhost)}/connections?columns=name`,
    );
    expect(connections.length).toBeGreaterThan(0);
    for (const c of connections) await f.rabbit.api('DELETE', `/api/connections/${encodeURIComponent(c.name)}`);
    const summary = await pass;

    const target = summary.targets[0]!;
    expect(target.queues.every((q) => q.stopReason === 'channel-closed' || q.stopReason === 'share-moved')).toBe(true);
    expect(target.moved).toBeLessThan(total);
    const all = tally([...(await f.drain('cut')), ...(await Promise.all(staging.map(f.drain))).flat()]);
    expect(all.unique.size).toBe(total);
  });
});
