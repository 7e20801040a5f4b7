import type { ConfirmChannel } from 'amqplib';
import { DEPTH_READ_CHANNELS, readyCounts } from '../../../../lib/rabbitmq/ready-counts';
import { type DistributorFixture, distributorFixture } from '../fixture';

describe('readyCounts (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  it('reads the exact depth of 300 queues on several channels at once, missing ones as undefined', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `depth»/t${String(i).padStart(3, '0')}`);
    await f.withChannel(async (channel) => {
      for (const [i, name] of names.entries()) {
        await channel.assertQueue(name, { durable: true });
        for (let m = 0; m < i % 7; m++) channel.sendToQueue(name, Buffer.from(`${name}-${m}`));
      }
      await channel.waitForConfirms();
    });
    const missing = ['depth»/gone-1', 'depth»/gone-2', 'depth»/gone-3'];
    // Missing queues spread among the others: each closes its reader's channel.
    const asked = [
      ...names.slice(0, 100),
      missing[0]!,
      ...names.slice(100, 200),
      missing[1]!,
      ...names.slice(200),
      missing[2]!,
    ];
    let open = 0;
    let mostOpen = 0;
    const opened: ConfirmChannel[] = [];
    const openChannel = async () => {
      const channel = await f.session.openConfirmChannel();
      opened.push(channel);
      mostOpen = Math.max(mostOpen, ++open);
      channel.once('close', () => open--);
      return channel;
    };
    const counts = await readyCounts(openChannel, asked);
    expect(Object.fromEntries(counts)).toEqual({
      ...Object.fromEntries(names.map((name, i) => [name, i % 7])),
      ...Object.fromEntries(missing.map((name) => [name, undefined])),
    });
    expect(counts.size).toBe(asked.length);
    expect(mostOpen).toBeGreaterThan(1);
    expect(mostOpen).toBeLessThanOrEqual(DEPTH_READ_CHANNELS);
  });
});
