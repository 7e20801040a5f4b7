import { type ChannelModel, connect } from 'amqplib';
import { loadDistributorConfig } from '../lib/config/distributor';
import { ManagementClient } from '../lib/rabbitmq/management';
import { startDynamo } from '../local/embedded-dynamo';
import { type Outgoing, publishConfirmed, rawPump, taskMessage } from './lib/amqp';
import { type Benchmark, ratio } from './lib/benchmark';
import { benchDistributor } from './lib/distributor';
import { waitForListing } from './lib/listing';
import { median, timed } from './lib/report';
import { createBenchVhost } from './lib/services';

type Flags = 'messages' | 'queues' | 'prefetch' | 'concurrency' | 'rounds';

const target = 'dataprocessing-entity-extract-in';
const targetArguments = { 'x-max-priority': 9 };

/**
 * SPEC §3 throughput: one distribution pass moving every message of N staging queues into
 * their target, against raw amqplib pumps (consume → publish with confirm → ack, same prefetch)
 * moving the same number of messages, from the same queues with the same parallelism and from
 * one queue, on the same broker in the same run.
 */
export const distributorBench: Benchmark<Flags> = {
  name: 'distributor',
  summary: 'distribution pass throughput against a raw amqplib pump',
  flags: {
    messages: { quick: 50_000, tiny: 300, help: 'messages moved per run, spread evenly over the staging queues' },
    queues: { quick: 20, tiny: 3, help: 'staging queues of the one target' },
    prefetch: { quick: 500, tiny: 50, help: 'prefetch of every consumer, Fairway (DISTRIBUTOR_MAX_PREFETCH) and raw' },
    concurrency: { quick: 4, tiny: 2, help: 'staging queues moved at once (DISTRIBUTOR_MOVE_CONCURRENCY)' },
    rounds: { quick: 2, tiny: 1, help: 'repetitions; the table shows the median' },
  },
  async run(flags, progress) {
    const perQueue = Math.ceil(flags.messages / flags.queues);
    const messages = perQueue * flags.queues;
    const staging = Array.from({ length: flags.queues }, (_, i) => `${target}»/tenant${i}/workflow`);
    const vhost = await createBenchVhost('distributor');
    const dynamo = await startDynamo();
    const model = await connect(vhost.amqpUrl);
    try {
      await dynamo.createTables();
      const config = loadDistributorConfig({
        AMQP_URL: vhost.amqpUrl,
        RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
        RABBITMQ_VHOST: vhost.vhost,
        DISTRIBUTOR_TABLE: 'DistributorStateTable',
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        DISTRIBUTOR_DEFAULT_MAX_LENGTH: String(messages),
        DISTRIBUTOR_MAX_PREFETCH: String(flags.prefetch),
        DISTRIBUTOR_MOVE_CONCURRENCY: String(flags.concurrency),
      });
      const management = new ManagementClient(vhost.managementUrl, vhost.vhost);
      const distributor = benchDistributor(config, progress);
      const publisher = await model.createConfirmChannel();
      await publisher.assertQueue(target, { durable: true, arguments: targetArguments });
      await publisher.assertQueue('raw-source', { durable: true });
      for (const name of staging) await publisher.assertQueue(name, { durable: true });

      const rates = { raw1: [] as number[], rawSame: [] as number[], fairway: [] as number[] };
      const measure = {
        raw1: async () => {
          await publishConfirmed(publisher, fill(['raw-source'], messages));
          const { result, seconds } = await timed(() =>
            rawPump(model, ['raw-source'], target, messages, flags.prefetch, 1),
          );
          await expectMoved(model, result, messages, 'the raw pump of one queue');
          return seconds;
        },
        rawSame: async () => {
          await publishConfirmed(publisher, fill(staging, perQueue));
          const { result, seconds } = await timed(() =>
            rawPump(model, staging, target, perQueue, flags.prefetch, flags.concurrency),
          );
          await expectMoved(model, result, messages, 'the raw pump of the staging queues');
          return seconds;
        },
        fairway: async () => {
          await publishConfirmed(publisher, fill(staging, perQueue));
          await waitForListing(management, staging, perQueue);
          const { result, seconds } = await timed(() => distributor.runPass(15 * 60_000));
          await expectMoved(model, result.moved, messages, 'the pass');
          return seconds;
        },
      };
      const order = Object.keys(measure) as (keyof typeof measure)[];
      for (let round = 0; round < flags.rounds; round++) {
        // Rotating the order spreads drift on a shared machine over all three.
        for (const key of [...order.slice(round % 3), ...order.slice(0, round % 3)]) {
          const seconds = await measure[key]();
          rates[key].push(messages / seconds);
          progress(`${key}: ${messages} messages in ${seconds.toFixed(2)} s`);
        }
      }
      await distributor.close();

      const [raw1, rawSame, fairway] = [median(rates.raw1), median(rates.rawSame), median(rates.fairway)];
      const row = (run: string, rate: number, runs: number[]) => ({
        run,
        'msg/s (median)': rate,
        'runs (msg/s)': list(runs),
        '÷ raw, same queues': ratio(rate, rawSame),
        '÷ raw, 1 queue': ratio(rate, raw1),
      });
      return [
        {
          title: `Distributor throughput: ${messages} messages (≈1 KB task messages, persistent, priorities 1–9) into one target`,
          rows: [
            row(`raw amqplib pump, 1 queue, prefetch ${flags.prefetch}`, raw1, rates.raw1),
            row(
              `raw amqplib pump, ${flags.queues} queues, ${flags.concurrency} at a time, prefetch ${flags.prefetch}`,
              rawSame,
              rates.rawSame,
            ),
            row(
              `Fairway pass, ${flags.queues} staging queues, ${flags.concurrency} at a time, prefetch ${flags.prefetch}`,
              fairway,
              rates.fairway,
            ),
          ],
          notes: [
            'Goal: Fairway ≥ 0.9 × the raw pump. "Same queues" is the like-for-like baseline (same queues, same ' +
              'parallelism, same prefetch): it isolates what Fairway adds. One queue is the plain single-consumer ' +
              'pump; RabbitMQ runs each queue in one process, so several queues at once can beat it.',
            'The pass time includes the management listing, the DynamoDB lease and rotation (dynalite, in process), ' +
              'exact depth reads over AMQP and two channels per staging queue; the raw pumps skip all of that.',
          ],
        },
      ];
    } finally {
      await model.close().catch(() => undefined);
      await dynamo.stop();
      await vhost.delete();
    }
  },
};

function* fill(queues: readonly string[], perQueue: number): Generator<Outgoing> {
  for (let i = 0; i < perQueue; i++) {
    for (const [q, queue] of queues.entries()) {
      yield { queue, content: taskMessage(`tenant${q}`, i), options: { priority: 1 + (i % 9) } };
    }
  }
}

/** Checks that `moved` messages all reached the target, then empties it for the next run. */
async function expectMoved(model: ChannelModel, moved: number, expected: number, what: string): Promise<void> {
  const channel = await model.createChannel();
  try {
    const { messageCount } = await channel.checkQueue(target);
    if (moved !== expected || messageCount !== expected) {
      throw new Error(`${what} moved ${moved} and the target holds ${messageCount}; expected ${expected}`);
    }
    await channel.purgeQueue(target);
  } finally {
    await channel.close();
  }
}

const list = (values: number[]) => values.map((v) => Math.round(v)).join(', ');
