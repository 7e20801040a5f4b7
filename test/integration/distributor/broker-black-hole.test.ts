import type { ConfirmChannel } from 'amqplib';
import { errorText } from '../../../lib/platform/errors';
import { AmqpSession } from '../../../lib/rabbitmq/connection';
import { endingOf, type StallingProxy, stallingProxy } from '../../harness/black-hole';
import { type DistributorFixture, distributorFixture } from './fixture';

/** The distributor's timeout (serverless.yml): a pass must end before it, whatever the broker does. */
const DISTRIBUTOR_TIMEOUT_MS = 60_000;

// Issue 26 item 4: a broker that stops answering in the middle of a pass (a frozen node, a failover
// that leaves the open connection without a peer) ends the pass's broker calls within their
// bounds: the pass reports the target failed, naming RabbitMQ, before the function's timeout.
describe('a distribution pass on a broker that stops answering', () => {
  let f: DistributorFixture;
  let proxy: StallingProxy;
  let session: AmqpSession;
  beforeAll(async () => {
    f = await distributorFixture();
    proxy = await stallingProxy({ host: '127.0.0.1', port: Number(new URL(f.rabbit.amqpUrl).port || 5672) });
    const url = new URL(f.rabbit.amqpUrl);
    url.host = `${proxy.host}:${proxy.port}`;
    session = new AmqpSession(url.toString());
  });
  afterAll(async () => {
    await proxy?.close();
    await session?.close();
    await f?.close();
  });

  it('fails the target, naming RabbitMQ, before the function timeout', async () => {
    await f.stage('stalled', { 'x-max-priority': 9 }, { 'stalled»/a': 5, 'stalled»/b': 5 });
    // Channels opened while the broker still answered: the pass's own calls on them meet the stall.
    const opened: ConfirmChannel[] = await Promise.all(Array.from({ length: 24 }, () => session.openConfirmChannel()));
    proxy.stall();
    const openChannel = async () => opened.pop() ?? session.openConfirmChannel();
    let summary: unknown;
    const pass = f
      .distributor({}, openChannel)
      .runPass(DISTRIBUTOR_TIMEOUT_MS)
      .then((s) => {
        summary = s;
      });
    const ending = await endingOf(pass, 90_000);
    expect(ending).toMatchObject({ pending: false });
    expect(ending.ms).toBeLessThan(DISTRIBUTOR_TIMEOUT_MS);
    const report = JSON.stringify({ ending, summary, warnings: f.warnings }, (_, value) =>
      value instanceof Error ? errorText(value) : value,
    );
    expect(report).toMatch(/RabbitMQ did not answer/);
    expect([await f.depth('stalled»/a'), await f.depth('stalled»/b')]).toEqual([5, 5]); // nothing lost
  }, 100_000);
});
