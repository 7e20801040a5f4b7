import { type ChannelModel, connect } from 'amqplib';
import { ManagementClient } from '../lib/rabbitmq/management';
import { type Outgoing, publishConfirmed, rawPump, taskMessage } from './lib/amqp';
import { type Benchmark, ratio } from './lib/benchmark';
import { benchDistributor, benchDistributorConfig, DISTRIBUTOR_TIMEOUT_MS } from './lib/distributor';
import { delayedVhost, startBenchDynamo } from './lib/hops';
import { holding, waitForListing } from './lib/listing';
import { goalsTable, inRotation, median, timed } from './lib/report';
import { createBenchVhost } from './lib/services';

type Flags = 'messages' | 'queues' | 'prefetch' | 'concurrency' | 'rounds' | 'delay';

const target = 'dataprocessing-entity-extract-in';
const targetArguments = { 'x-max-priority': 9 };

/**
 * SPEC §3 throughput: one distribution pass moving every message of N staging queues into
 * their target, against raw amqplib pumps (consume → publish with confirm → ack, same prefetch)
 * moving the same number of messages, from the same queues with the same parallelism and from
 * one queue, on the same broker in the same run, every run through the same delay proxy.
 */
export const distributorBench: Benchmark<Flags> = {
  name: 'distributor',
  summary: 'distribution pass throughput against a raw amqplib pump',
  flags: {
    messages: { quick: 50_000, tiny: 300, help: 'messages moved per run, spread evenly over the staging queues' },
    queues: { quick: 20, tiny: 3, help: 'staging queues of the one target' },
    prefetch: { quick: 500, tiny: 50, help: 'prefetch of every consumer, Fairway (DISTRIBUTOR_MAX_PREFETCH) and raw' },
    concurrency: { quick: 4, tiny: 2, help: 'staging queues moved at once (DISTRIBUTOR_MOVE_CONCURRENCY)' },
    rounds: { quick: 3, tiny: 1, help: 'repetitions, the order rotated each round; the table shows the median' },
    delay: { quick: 1, tiny: 1, help: 'ms added to every round trip to RabbitMQ and DynamoDB (a delay proxy)' },
  },
  async run(flags, progress) {
    const perQueue = Math.ceil(flags.messages / flags.queues);
    const messages = perQueue * flags.queues;
    const staging = Array.from({ length: flags.queues }, (_, i) => `${target}»/tenant${i}/workflow`);
    const direct = await createBenchVhost('distributor');
    const vhost = await delayedVhost(direct, flags.delay);
    const dynamo = await startBenchDynamo(flags.delay);
    const model = await connect(vhost.amqpUrl, { noDelay: true });
    const distributor = benchDistributor(
      benchDistributorConfig(vhost, dynamo.endpoint, {
        DISTRIBUTOR_DEFAULT_MAX_LENGTH: String(messages),
        DISTRIBUTOR_MAX_PREFETCH: String(flags.prefetch),
        DISTRIBUTOR_MOVE_CONCURRENCY: String(flags.concurrency),
      }),
      progress,
    );
    try {
      const management = new ManagementClient(direct.managementUrl, direct.vhost);
      const publisher = await model.createConfirmChannel();
      await publisher.assertQueue(target, { durable: true, arguments: targetArguments });
      await publisher.assertQueue('raw-source', { durable: true });
      for (const name of staging) await publisher.assertQueue(name, { durable: true });

      /** Fills `sources` and waits for the listing to show them full: the pass needs that, so every run gets it. */
      const filled = async (sources: string[], count: number) => {
        await publishConfirmed(publisher, fill(sources, count));
        await waitForListing(management, holding(sources, count));
      };
      const rates = await inRotation(
        {
          raw1: async () => {
            await filled(['raw-source'], messages);
            const { result, seconds } = await timed(() =>
              rawPump(model, ['raw-source'], target, messages, flags.prefetch, 1),
            );
            await expectMoved(model, result, messages, 'the raw pump of one queue');
            return messages / seconds;
          },
          rawSame: async () => {
            await filled(staging, perQueue);
            const { result, seconds } = await timed(() =>
              rawPump(model, staging, target, perQueue, flags.prefetch, flags.concurrency),
            );
            await expectMoved(model, result, messages, 'the raw pump of the staging queues');
            return messages / seconds;
          },
          fairway: async () => {
            await filled(staging, perQueue);
            const { result, seconds } = await timed(() => distributor.runPass(DISTRIBUTOR_TIMEOUT_MS));
            await expectMoved(model, result.moved, messages, 'the pass');
            return messages / seconds;
          },
        },
        flags.rounds,
        progress,
      );

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
          title: `Distributor throughput: ${messages} messages (≈1 KB task messages, persistent, priorities 1–9) into one target, ${flags.delay} ms round-trip delay`,
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
            'Every run starts once the management listing shows the queues full (the pass needs that; the raw pumps ' +
              'wait for it too), in an order rotated each round. The pass time includes the management listing, the ' +
              'DynamoDB lease and rotation (dynalite in its own process) and exact depth reads over AMQP; every run ' +
              `talks to RabbitMQ and DynamoDB through the same delay proxy (+${flags.delay} ms a round trip).`,
          ],
        },
        goalsTable('distributor', [
          {
            goal: `distributor pass msg/s ÷ raw pump, ${flags.queues} queues, ${flags.delay} ms delay`,
            target: '≥ 0.9',
            measured: `${(fairway / rawSame).toFixed(2)} (${Math.round(fairway)} vs ${Math.round(rawSame)} msg/s)`,
            met: fairway / rawSame >= 0.9,
          },
        ]),
      ];
    } finally {
      await distributor.close();
      await model.close().catch(() => undefined);
      await dynamo.stop();
      await vhost.stopDelay();
      await direct.delete();
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
