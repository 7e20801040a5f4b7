import { type ChannelModel, connect } from 'amqplib';
import { account } from '../../../bench/lib/flood-metrics';
import { drainIds, RateWorkers, sleep } from '../../../bench/lib/flood-traffic';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

/**
 * The flood bench's workers when they stop, on each target type: what they started is acked and
 * stays gone, what they held unstarted is back in the queue, and the accounting finds no duplicate.
 * On a quorum queue, acking a full prefetch one ack at a time right before the channel closed put
 * 16 of 50 back (the broker applied about the first 34): every quorum flood run counted 16.
 */
describe('flood bench workers', () => {
  let rabbit: TestVhost;
  let model: ChannelModel;

  beforeAll(async () => {
    rabbit = await createTestVhost();
    model = await connect(rabbit.amqpUrl);
  });

  afterAll(async () => {
    await model.close();
    await rabbit.delete();
  });

  it.each([
    ['classic', {}],
    ['quorum', { 'x-queue-type': 'quorum' }],
  ])('on a %s queue, finish what they started and put back what they held unstarted', async (type, args) => {
    const queue = `work-${type}`;
    const channel = await model.createConfirmChannel();
    await channel.assertQueue(queue, { durable: true, arguments: args });
    const sent = Array.from({ length: 80 }, (_, i) => `w#${i}`);
    for (const id of sent) channel.sendToQueue(queue, Buffer.from('{}'), { messageId: id });
    await channel.waitForConfirms();
    await channel.close();
    const workers = new RateWorkers(model, queue, 20, Date.now(), { consumers: 1, prefetch: 50 });
    await workers.start();
    // A full prefetch held, a few processed: at 20 msg/s the rest of the 50 are far from started.
    while (workers.deliveries.length < 50 || workers.acks.length < 3) await sleep(10);
    await workers.stop();

    const started = workers.deliveries.filter((d) => d.started).map((d) => d.id);
    const unstarted = workers.deliveries.filter((d) => !d.started).map((d) => d.id);
    expect(unstarted.length).toBeGreaterThan(34); // more than the broker takes one by one before a close
    const queued = await drainIds(model, [queue]);
    expect(queued.filter((id) => started.includes(id))).toEqual([]);
    expect(queued).toEqual(expect.arrayContaining(unstarted));
    expect(account(sent, workers.deliveries, queued)).toEqual({
      sent: 80,
      delivered: started.length,
      duplicates: 0,
      waiting: 80 - started.length,
      lost: 0,
      strangers: 0,
    });
    expect([...workers.firstStart.keys()].sort()).toEqual([...started].sort()); // none put back counts as started
  });
});
