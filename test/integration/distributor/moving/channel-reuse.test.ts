import type { ConfirmChannel } from 'amqplib';
import { channelSlots } from '../../../../lib/distributor/moving/channels';
import { moveOn } from '../../../../lib/distributor/moving/mover';
import { testMoveRequest } from '../../../harness/distributor-move-messages';
import { type DistributorFixture, distributorFixture } from '../fixture';

describe('channel slots (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  /** Channels opened through it, in order. */
  const watched = () => {
    const opened: ConfirmChannel[] = [];
    const openChannel = async () => {
      const channel = await f.session.openConfirmChannel();
      opened.push(channel);
      return channel;
    };
    return { opened, openChannel };
  };
  const request = (source: string, target: string, count: number) =>
    testMoveRequest({ source, target, count, prefetch: 50 });

  it('a pass over 12 staging queues with 2 slots opens 2 channel pairs, not one per queue', async () => {
    const staging = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`reuse»/t${i}`, i % 2 === 0 ? 1 : 5]));
    await f.stage('reuse', {}, staging);
    const { opened, openChannel } = watched();
    const pass = await f.distributor({}, openChannel, undefined, undefined, { moveConcurrency: 2 }).runPass(60_000);
    expect(pass.moved).toBe(36);
    expect(await f.depth('reuse')).toBe(36);
    // Four channels read the 13 depths (four reads a channel at most), then two pairs move all 12 queues.
    expect(opened.length).toBe(4 + 2 * 2);
  });

  it('a slot whose mover left its channels dirty closes them and the next mover gets a fresh pair', async () => {
    await f.declare('dirty');
    await f.declare('dirty»/t');
    await f.publish('dirty»/t', 3, 'dirty');
    const { opened, openChannel } = watched();
    const slots = channelSlots(1, openChannel);
    // A missing staging queue: the broker closes the consuming channel (404).
    const missing = await slots.use(async (pair) => {
      const moved = await moveOn(pair, request('dirty»/gone', 'dirty', 5));
      return { value: moved.result, reusable: moved.reusable };
    });
    expect(missing.stopReason).toBe('source-missing');
    const next = await slots.use(async (pair) => {
      const moved = await moveOn(pair, request('dirty»/t', 'dirty', 3));
      return { value: moved.result, reusable: moved.reusable };
    });
    await slots.close();
    expect(next).toEqual({ moved: 3, requeued: 0, parked: 0, stopReason: 'share-moved' });
    expect(opened.length).toBe(4);
    expect(await f.depth('dirty')).toBe(3);
  });

  it('a pair left clean serves the next mover of the slot, by consumer and by basic.get', async () => {
    await f.declare('clean');
    await f.declare('clean»/a');
    await f.declare('clean»/b');
    await f.publish('clean»/a', 40, 'a');
    await f.publish('clean»/b', 1, 'b');
    const { opened, openChannel } = watched();
    const slots = channelSlots(1, openChannel);
    const results = [];
    for (const [source, count] of [
      ['clean»/a', 40],
      ['clean»/b', 1],
      ['clean»/b', 1],
    ] as const) {
      results.push(
        await slots.use(async (pair) => {
          const moved = await moveOn(pair, request(source, 'clean', count));
          return { value: moved.result, reusable: moved.reusable };
        }),
      );
    }
    await slots.close();
    expect(results.map((r) => [r.moved, r.stopReason])).toEqual([
      [40, 'share-moved'],
      [1, 'share-moved'],
      [0, 'source-drained'],
    ]);
    expect(opened.length).toBe(2);
    expect(await f.depth('clean')).toBe(41);
  });
});
