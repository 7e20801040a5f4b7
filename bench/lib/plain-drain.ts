import type { ChannelModel } from 'amqplib';
import { ratePerSecond } from './flood-metrics';
import { RateWorkers, sleep } from './flood-traffic';

/** How long the plain drain is measured, after its own warm-up. */
const MEASURED_MS = 6_000;
const WARM_UP_MS = 1_000;

/**
 * The workers' own rate, the baseline of "noisy ÷ workers": the same worker shape (consumers,
 * prefetch, nominal rate) on the same connection, draining a plain queue of the target's type kept
 * full, with no Fairway in the way. At prefetch 1 a consumer waits a round trip per message, so its
 * rate stays under the nominal one; a ratio against the nominal rate would charge Fairway for that.
 */
export async function plainDrainRate(
  model: ChannelModel,
  queue: string,
  args: Record<string, unknown>,
  nominal: number,
  shape: { consumers: number; prefetch: number },
): Promise<number> {
  const setup = await model.createConfirmChannel();
  await setup.assertQueue(queue, { durable: true, arguments: args });
  // Never runs dry: the nominal rate over the whole run, twice, plus what the consumers hold.
  const count = Math.ceil((nominal * 2 * (MEASURED_MS + WARM_UP_MS)) / 1000) + shape.consumers * shape.prefetch;
  for (let i = 0; i < count; i++) setup.sendToQueue(queue, Buffer.from('{}'), { messageId: `plain#${i}` });
  await setup.waitForConfirms();
  const t0 = Date.now();
  const workers = new RateWorkers(model, queue, nominal, t0, shape);
  await workers.start();
  await sleep(WARM_UP_MS + MEASURED_MS);
  await workers.stop();
  await setup.deleteQueue(queue);
  await setup.close();
  return ratePerSecond(workers.acks, new Set(['plain']), WARM_UP_MS, WARM_UP_MS + MEASURED_MS);
}
