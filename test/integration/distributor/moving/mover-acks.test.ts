import type { ConfirmChannel, ConsumeMessage, Message } from 'amqplib';
import { closeChannelPair, openChannelPair } from '../../../../lib/distributor/moving/channels';
import { moveOn } from '../../../../lib/distributor/moving/mover';
import { closeWithin } from '../../../../lib/rabbitmq/connection';
import { testMove, testMoveRequest } from '../../../harness/distributor-move-messages';
import { eventually } from '../../../harness/eventually';
import { type DistributorFixture, distributorFixture } from '../fixture';

/**
 * The mover acks staging copies in bulk (`multiple`), and a bulk ack must never cover a delivery
 * whose publish the broker has not confirmed. The channels are watched: what was delivered with
 * which tag, which publishes were confirmed, which acks and nacks went out.
 */
describe('moveMessages acks (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  const watched = () => {
    const delivered = new Map<number, string>(); // delivery tag → message id
    const confirmed = new Set<string>();
    const nacked = new Set<number>();
    const acks: { tag: number; multiple: boolean; covered: number; unconfirmed: string[] }[] = [];
    let ackedUpTo = 0;
    const openChannel = async () => {
      const channel = await f.session.openConfirmChannel();
      const { consume, publish, ack, nack } = channel;
      channel.consume = (queue, onMessage, options) =>
        consume.call(
          channel,
          queue,
          (message: ConsumeMessage | null) => {
            if (message) delivered.set(message.fields.deliveryTag, String(message.properties.messageId));
            onMessage(message);
          },
          options,
        );
      channel.publish = (exchange, key, content, options, callback) =>
        publish.call(channel, exchange, key, content, options, (error, ok) => {
          if (!error) confirmed.add(String(options?.messageId));
          callback?.(error, ok);
        });
      channel.ack = (message: Message, allUpTo?: boolean) => {
        const tag = message.fields.deliveryTag;
        const tags = allUpTo ? [...delivered.keys()].filter((t) => t > ackedUpTo && t <= tag && !nacked.has(t)) : [tag];
        const unconfirmed = tags.map((t) => delivered.get(t)!).filter((id) => !confirmed.has(id));
        acks.push({ tag, multiple: allUpTo === true, covered: tags.length, unconfirmed });
        if (allUpTo) ackedUpTo = tag;
        ack.call(channel, message, allUpTo);
      };
      channel.nack = (message: Message, allUpTo?: boolean, requeue?: boolean) => {
        nacked.add(message.fields.deliveryTag);
        nack.call(channel, message, allUpTo, requeue);
      };
      return channel as ConfirmChannel;
    };
    return { openChannel, acks, confirmed };
  };

  /** Moves `count` from `${target}»/t` to `target`, 100 in flight at most. */
  const move = (openChannel: () => Promise<ConfirmChannel>, target: string, count: number) =>
    testMove(openChannel, { source: `${target}»/t`, target, count });

  it('acks many staging copies with one multiple ack, never one whose publish is unconfirmed', async () => {
    await f.declare('bulk');
    await f.declare('bulk»/t');
    await f.publish('bulk»/t', 600, 'b');
    const { openChannel, acks, confirmed } = watched();

    const result = await move(openChannel, 'bulk', 600);

    expect(result).toEqual({ moved: 600, requeued: 0, parked: 0, stopReason: 'share-moved' });
    expect(confirmed.size).toBe(600);
    expect(acks.flatMap((a) => a.unconfirmed)).toEqual([]);
    expect(acks.reduce((n, a) => n + a.covered, 0)).toBe(600);
    expect(acks.length).toBeLessThan(600);
    expect(await f.depth('bulk')).toBe(600);
    expect(await f.depth('bulk»/t')).toBe(0);
  });

  it('a target that refuses part of the batch: the refused go back, the bulk acks skip them, nothing is lost', async () => {
    await f.declare('bulk-full', { 'x-max-length': 150, 'x-overflow': 'reject-publish' });
    await f.declare('bulk-full»/t');
    await f.publish('bulk-full»/t', 400, 'bf');
    const { openChannel, acks } = watched();

    const result = await move(openChannel, 'bulk-full', 400);

    expect(result).toMatchObject({ moved: 150, stopReason: 'target-rejected' });
    expect(acks.flatMap((a) => a.unconfirmed)).toEqual([]);
    expect(acks.reduce((n, a) => n + a.covered, 0)).toBe(150);
    const ids = [...(await f.drain('bulk-full')), ...(await f.drain('bulk-full»/t'))];
    expect(new Set(ids).size).toBe(400);
    expect(ids.length).toBe(400);
  });

  it('a confirm that never comes, on a quorum staging queue: the confirmed behind it reach the target once, none comes back', async () => {
    // The staging queue is quorum as the router declares it when ROUTER_TARGETS keeps the target's type.
    await f.declare('held', { 'x-queue-type': 'quorum' });
    await f.declare('held»/t', { 'x-queue-type': 'quorum' });
    await f.publish('held»/t', 150, 'h');
    const { openChannel, acks } = watched();
    // The one stand-in: a broker cannot be made to leave one publish unconfirmed on demand, so the
    // publish of h-5 is never sent and its confirm never comes (the pump waits DRAIN_TIMEOUT_MS);
    // the 144 behind it are confirmed.
    const withholding = async () => {
      const channel = await openChannel();
      const { publish } = channel;
      channel.publish = (exchange, key, content, options, callback) =>
        options?.messageId === 'h-5' || publish.call(channel, exchange, key, content, options, callback);
      return channel;
    };
    const pair = await openChannelPair(withholding);
    // Writes to another quorum queue, as on a busy broker: on an idle one the staging queue often
    // writes the first acks in time to take the rest before the close, and the test passes by luck.
    await f.declare('ballast', { 'x-queue-type': 'quorum' });
    let moving = true;
    const ballast = f.withChannel(async (channel) => {
      while (moving) {
        for (let i = 0; i < 10; i++) channel.sendToQueue('ballast', Buffer.from('b'));
        await channel.waitForConfirms();
      }
    });

    const { result } = await moveOn(
      pair,
      testMoveRequest({ source: 'held»/t', target: 'held', count: 150, prefetch: 150 }),
    );
    // The consumer closed straight after the move (closeChannelPair closes the publisher first, a
    // round trip that at times lets the queue catch up): of a burst of single acks just before a
    // close, a quorum queue applied the first 33 and put the other 111 back.
    await closeWithin(pair.consumer);
    await closeChannelPair(pair);
    moving = false;
    await ballast;

    expect(result).toMatchObject({ moved: 149, requeued: 0, unconfirmed: 1, stopReason: 'share-moved' });
    expect(acks.flatMap((a) => a.unconfirmed)).toEqual([]);
    await eventually(async () => (await f.depth('held»/t')) > 0 || undefined, 'h-5 back in held»/t');
    const moved = await f.drain('held');
    expect({ moved: moved.length, distinct: new Set(moved).size }).toEqual({ moved: 149, distinct: 149 });
    expect(moved).not.toContain('h-5');
    expect(await f.drain('held»/t')).toEqual(['h-5']);
  });
});
