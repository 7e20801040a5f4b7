import { type Channel, type ChannelModel, connect } from 'amqplib';
import { type ConfirmOutcome, publishAndConfirm, publishIsolatingRefusals } from '../../../lib/rabbitmq/confirms';
import { AmqpSession, closeWithin } from '../../../lib/rabbitmq/connection';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

/** The AMQP toolkit's publish-and-confirm against a real broker: each outcome as RabbitMQ gives it. */
describe('publishAndConfirm and publishIsolatingRefusals (real RabbitMQ)', () => {
  let rabbit: TestVhost;
  let session: AmqpSession;
  let connection: ChannelModel;
  let channel: Channel;

  beforeAll(async () => {
    rabbit = await createTestVhost();
    session = new AmqpSession(rabbit.amqpUrl);
    connection = await connect(rabbit.amqpUrl);
    channel = await connection.createChannel();
    await channel.assertQueue('full', { arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' } });
  });
  afterAll(async () => {
    await session?.close();
    await connection?.close();
    await rabbit?.delete();
  });

  const outcomeOf = (outcome: ConfirmOutcome) =>
    outcome.confirmed ? 'confirmed' : `${outcome.reason} ${outcome.error.replyCode ?? ''}`.trim();
  const message = (queue: string, body: string, options = {}) => ({ queue, body: Buffer.from(body), options });

  async function bodies(queue: string): Promise<string[]> {
    const found: string[] = [];
    for (let got = await channel.get(queue, { noAck: true }); got; got = await channel.get(queue, { noAck: true }))
      found.push(got.content.toString());
    return found.sort();
  }

  it('confirmed, returned (312 NO_ROUTE, only the publish with that body) and nacked (a full reject-publish queue)', async () => {
    await channel.assertQueue('present');
    const confirmChannel = await session.openConfirmChannel();
    const outcomes = await publishAndConfirm(
      confirmChannel,
      [message('present', 'a'), message('missing', 'b'), message('full', 'c'), message('full', 'd')],
      5_000,
    );
    expect(outcomes.map(outcomeOf)).toEqual(['confirmed', 'returned 312', 'confirmed', 'nacked']);
    expect(confirmChannel.listenerCount('return')).toBe(0);
    await closeWithin(confirmChannel);
  });

  it('a refusal that closes the channel fails the publishes in flight beside it (406)', async () => {
    await channel.assertQueue('beside');
    const confirmChannel = await session.openConfirmChannel();
    const publications = Array.from({ length: 30 }, (_, i) =>
      i === 15 ? message('beside', 'poison', { expiration: '-1' }) : message('beside', `healthy-${i}`),
    );
    const outcomes = await publishAndConfirm(confirmChannel, publications, 5_000);
    expect(outcomes[15]).toMatchObject({ confirmed: false, reason: 'closed', error: { replyCode: 406 } });
    expect(outcomes.slice(16).map(outcomeOf)).toEqual(Array(14).fill('closed 406'));
    await bodies('beside');
  });

  it('publishIsolatingRefusals: the refused publish fails alone; every other is confirmed and in the queue', async () => {
    await channel.assertQueue('isolated');
    const publications = Array.from({ length: 30 }, (_, i) =>
      i === 15 ? message('isolated', 'poison', { expiration: '-1' }) : message('isolated', `healthy-${i}`),
    );
    const outcomes = await publishIsolatingRefusals(
      await session.openConfirmChannel(),
      () => session.openConfirmChannel(),
      publications,
      5_000,
    );
    expect(outcomes.map(outcomeOf)).toEqual(publications.map((_, i) => (i === 15 ? 'closed 406' : 'confirmed')));
    const held = await bodies('isolated');
    const healthy = publications.filter((_, i) => i !== 15).map((p) => p.body.toString());
    // Each healthy message at least once; the ones enqueued before the close, and published again, twice.
    expect([...new Set(held)].sort()).toEqual(healthy.sort());
    expect(held.length).toBeLessThanOrEqual(2 * healthy.length);
  });
});
