import type { ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { ackLedger } from '../../lib/distributor/moving/publish-moved';

export interface Outgoing {
  queue: string;
  content: Buffer;
  options?: Options.Publish;
}

/**
 * Publishes every message on a confirm channel with pipelined confirms (no wait per message,
 * only when the socket buffer is full) and resolves once the broker confirmed them all. This is
 * the raw publish-with-confirm baseline, and how the benches fill queues.
 */
export async function publishConfirmed(channel: ConfirmChannel, messages: Iterable<Outgoing>): Promise<number> {
  let published = 0;
  for (const { queue, content, options } of messages) {
    published++;
    if (!channel.sendToQueue(queue, content, { persistent: true, ...options })) {
      await new Promise((resolve) => channel.once('drain', resolve));
    }
  }
  await channel.waitForConfirms();
  return published;
}

/**
 * The raw pump the distributor is measured against, written as a careful hand-made pump would be:
 * for each source, consume with manual acks and `prefetch`, publish each delivery to `target` on a
 * confirm channel with the distributor's publish options (every property kept, `mandatory`, without
 * which a confirm does not say the message reached a queue), ack the source copies once their
 * confirms arrive, in bulk as the mover does (one `multiple` ack per burst of confirms, never past an
 * unconfirmed publish: confirms come out of order, so through the same ledger); `concurrency` sources at a time, each on a channel pair of its own.
 * No planning, no leases, no exact depth reads, no per-message bookkeeping.
 */
export async function rawPump(
  model: ChannelModel,
  sources: readonly string[],
  target: string,
  countPerSource: number,
  prefetch: number,
  concurrency: number,
): Promise<number> {
  const queue = [...sources];
  let moved = 0;
  const worker = async () => {
    for (let source = queue.shift(); source !== undefined; source = queue.shift()) {
      const pumped = await pumpOne(model, source, target, countPerSource, prefetch);
      moved += pumped; // not `moved += await …`, which would add to a stale total
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, sources.length) }, worker));
  return moved;
}

async function pumpOne(
  model: ChannelModel,
  source: string,
  target: string,
  count: number,
  prefetch: number,
): Promise<number> {
  const consumer = await model.createChannel();
  const publisher = await model.createConfirmChannel();
  await consumer.prefetch(prefetch);
  const consumerTag = `bench-raw-pump-${source}`;
  const ledger = ackLedger<ConsumeMessage>();
  let received = 0;
  let acked = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      publisher.on('return', () => reject(new Error(`broker returned a publish to ${target}: no such queue`)));
      const onDelivery = (message: ConsumeMessage | null) => {
        if (message === null) return reject(new Error(`queue ${source} was deleted while pumping`));
        const tag = message.fields.deliveryTag;
        ledger.delivered(tag, message);
        if (received >= count) {
          consumer.nack(message, false, true);
          return ledger.nacked(tag);
        }
        received++;
        publisher.sendToQueue(target, message.content, { ...message.properties, mandatory: true }, (error) => {
          if (error) return reject(new Error(`broker nacked a publish to ${target}`));
          ledger.confirmed(tag);
          const upTo = ledger.take();
          if (upTo) consumer.ack(upTo, true);
          if (++acked === count) resolve();
        });
      };
      consumer.consume(source, onDelivery, { consumerTag }).catch(reject);
    });
    await consumer.cancel(consumerTag);
  } finally {
    await publisher.close();
    await consumer.close();
  }
  return acked;
}

/** A Worker Framework task message of about the size real ones have (~1 KB), for realistic payloads. */
export function taskMessage(tenant: string, index: number): Buffer {
  const taskData = Buffer.from(
    JSON.stringify({
      document: {
        reference: `ref_${index}`,
        fields: {
          CAF_WORKFLOW_NAME: [{ data: 'example_workflow' }],
          CAF_WORKFLOW_ACTION: [{ data: 'family_hashing' }],
        },
        failures: [],
      },
      customData: { tenantId: tenant, padding: 'x'.repeat(400) },
    }),
  ).toString('base64');
  return Buffer.from(
    JSON.stringify({
      version: 3,
      taskId: `bench-${tenant}-${index}`,
      taskClassifier: 'DocumentWorkerTask',
      taskApiVersion: 1,
      taskData,
      taskStatus: 'NEW_TASK',
      context: {},
      to: 'dataprocessing-entity-extract-in',
      tracking: null,
      sourceInfo: null,
      correlationId: String(index),
    }),
  );
}
