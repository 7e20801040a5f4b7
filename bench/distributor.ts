import { type ChannelModel, connect } from 'amqplib';
import type { PassSummary } from '../lib/distributor/report';
import { ManagementClient } from '../lib/rabbitmq/management';
import type { PassRequestEvent } from '../lib/work-board/pass-trigger';
import { type Outgoing, publishConfirmed, rawPump, taskMessage } from './lib/amqp';
import type { Benchmark } from './lib/benchmark';
import {
  benchDistributor,
  benchDistributorConfig,
  DISTRIBUTOR_TIMEOUT_MS,
  WHOLE_BACKLOG_PASS,
} from './lib/distributor';
import { delayedVhost, startBenchDynamo } from './lib/hops';
import { holding, waitForListing } from './lib/listing';
import { goalsTable, median, roundRatios, timed } from './lib/report';
import { createBenchVhost } from './lib/services';

type Flags = 'messages' | 'queues' | 'prefetch' | 'concurrency' | 'rounds' | 'delay';
type Run = 'raw1' | 'rawSame' | 'fairway';

const target = 'dataprocessing-entity-extract-in';
const targetArguments = { 'x-max-priority': 9 };
/**
 * Messages per queue of the untimed warm-up run of each side. The pass learns what a mover costs
 * a message to fit its plan to its deadline (lib/distributor/budget.ts), and learned from small
 * moves on a loaded machine the cost came out high enough that a pass deferred a quarter of its
 * queues: moves of this size give it the cost of the timed runs' large moves.
 */
const WARM_UP_PER_QUEUE = 250;

/**
 * SPEC §3 throughput: one distribution pass moving every message of N staging queues into
 * their target, against raw amqplib pumps (consume → publish with confirm → ack after the
 * confirm, same prefetch, same publish options) moving as many messages, from as many queues
 * of their own with the same parallelism, and from one queue, on the same broker in the same
 * run, every run through the same delay proxy. The goal is the median over rounds of the pass's
 * rate ÷ the same-queues pump's rate in the same round.
 */
export const distributorBench: Benchmark<Flags> = {
  name: 'distributor',
  summary: 'distribution pass throughput against a raw amqplib pump',
  flags: {
    messages: { quick: 30_000, tiny: 300, help: 'messages moved per run, spread evenly over the staging queues' },
    queues: { quick: 20, tiny: 3, help: 'staging queues of the one target' },
    prefetch: {
      quick: 500,
      tiny: 50,
      help: 'prefetch of every consumer, Fairway (its fixed maxPrefetch, 500) and raw',
    },
    concurrency: { quick: 4, tiny: 2, help: 'staging queues moved at once (the fixed moveConcurrency, 16)' },
    rounds: {
      quick: 5,
      tiny: 2,
      help: 'rounds of one run each, in an order alternating each round; the goal is the median of the rounds',
    },
    delay: { quick: 1, tiny: 1, help: 'ms added to every round trip to RabbitMQ and DynamoDB (a delay proxy)' },
  },
  async run(flags, progress) {
    const perQueue = Math.ceil(flags.messages / flags.queues);
    const messages = perQueue * flags.queues;
    const staging = Array.from({ length: flags.queues }, (_, i) => `${target}»/tenant${i}/workflow`);
    // The same-queues pump's own queues, like the staging queues but named so that no pass takes them for any.
    const rawQueues = Array.from({ length: flags.queues }, (_, i) => `raw-same:tenant${i}`);
    const direct = await createBenchVhost('distributor');
    const vhost = await delayedVhost(direct, flags.delay);
    const dynamo = await startBenchDynamo(flags.delay);
    const model = await connect(vhost.amqpUrl, { noDelay: true });
    const distributor = benchDistributor(
      benchDistributorConfig(
        vhost,
        dynamo.endpoint,
        {
          DISTRIBUTOR_DEFAULT_MAX_LENGTH: String(messages),
          // A pass's moving cost against the raw pump: the whole backlog in one pass.
          ...WHOLE_BACKLOG_PASS,
        },
        { maxPrefetch: flags.prefetch, moveConcurrency: flags.concurrency },
      ),
      progress,
    );
    try {
      const management = new ManagementClient(direct.managementUrl, direct.vhost);
      const publisher = await model.createConfirmChannel();
      await publisher.assertQueue(target, { durable: true, arguments: targetArguments });
      for (const name of ['raw-source', ...staging, ...rawQueues]) await publisher.assertQueue(name, { durable: true });
      const fillAll = (count: number) =>
        publishConfirmed(publisher, fill([staging, rawQueues], ['raw-source'], count, flags.queues));

      /** Each run moving `count` messages a queue; the pass moves what its staging queues hold. */
      const runsOf = (count: number, request?: PassRequestEvent): Record<Run, () => Promise<number>> => ({
        raw1: () => rawPump(model, ['raw-source'], target, count * flags.queues, flags.prefetch, 1),
        rawSame: () => rawPump(model, rawQueues, target, count, flags.prefetch, flags.concurrency),
        fairway: async () => {
          const pass = await distributor.runPass(DISTRIBUTOR_TIMEOUT_MS, request);
          if (pass.planned !== count * flags.queues)
            throw new Error(`The pass planned ${pass.planned}: ${stops(pass)}`);
          return pass.moved;
        },
      });

      // Untimed: every side's connections open and its code warm before the first timed run. The
      // pass is a requested one, which reads every staging queue without waiting for the listing.
      const warmUpPerQueue = Math.min(WARM_UP_PER_QUEUE, perQueue); // the target takes one run's messages
      await fillAll(warmUpPerQueue);
      const warmUp: PassRequestEvent = { source: 'fairway.pass-request', requestId: 'warm-up', target, delayMs: 0 };
      const warmUpRuns = runsOf(warmUpPerQueue, warmUp);
      for (const run of roundOrder(0)) {
        await expectMoved(model, await warmUpRuns[run](), warmUpPerQueue * flags.queues, `the ${run} warm-up`);
      }
      const timedRuns = runsOf(perQueue);

      const rates: Record<Run, number[]> = { raw1: [], rawSame: [], fairway: [] };
      for (let round = 0; round < flags.rounds; round++) {
        // One fill per round for every run of it; each starts once the listing shows it all (a pass needs that).
        await fillAll(perQueue);
        await waitForListing(
          management,
          new Map([...holding([...staging, ...rawQueues], perQueue), ['raw-source', messages]]),
        );
        for (const run of roundOrder(round)) {
          const { result, seconds } = await timed(timedRuns[run]);
          await expectMoved(model, result, messages, run);
          rates[run].push(messages / seconds);
          progress(`round ${round + 1}: ${run} ${(messages / seconds).toPrecision(4)} msg/s`);
        }
      }

      const byRound = (a: Run, b: Run) => roundRatios(rates[a], rates[b]);
      const goal = byRound('fairway', 'rawSame');
      const row = (run: Run, label: string) => ({
        run: label,
        'msg/s (median)': median(rates[run]),
        'runs (msg/s, by round)': list(rates[run]),
        '÷ raw, same queues (median of rounds)': median(byRound(run, 'rawSame')),
        '÷ raw, 1 queue (median of rounds)': median(byRound(run, 'raw1')),
      });
      return [
        {
          title: `Distributor throughput: ${messages} messages (≈1 KB task messages, persistent, priorities 1–9) into one target, ${flags.delay} ms round-trip delay, ${flags.rounds} rounds`,
          rows: [
            row('raw1', `raw amqplib pump, 1 queue, prefetch ${flags.prefetch}`),
            row(
              'rawSame',
              `raw amqplib pump, ${flags.queues} queues, ${flags.concurrency} at a time, prefetch ${flags.prefetch}`,
            ),
            row(
              'fairway',
              `Fairway pass, ${flags.queues} staging queues, ${flags.concurrency} at a time, prefetch ${flags.prefetch}`,
            ),
          ],
          notes: [
            'Goal: Fairway ≥ 0.9 × the raw pump. "Same queues" is the like-for-like baseline (as many queues of its ' +
              'own, filled alike, same parallelism, same prefetch, same publish options). One queue is the plain single-consumer pump; RabbitMQ runs each queue in one process, so several ' +
              'queues at once can beat it. Ratios are per round (runs side by side), then the median of the rounds.',
            `Pass ÷ same-queues pump by round: ${goal.map((r) => r.toFixed(2)).join(', ')}.`,
            'The raw pumps ack as the pass does, in bulk: one `multiple` ack per burst of confirms, never past an ' +
              'unconfirmed publish, so the ratio shows what Fairway costs, not a saving a careful pump would make too.',
            "Each round fills every run's queues at once, then starts once the management listing shows them full " +
              '(the pass needs that); the pass and the same-queues pump run one after the other, which goes first ' +
              'alternating each round, the one-queue pump before or after them every other two rounds. Every side ' +
              'has an untimed warm-up run first. The pass time includes the management listing, the DynamoDB lease ' +
              'and rotation (dynalite in its own process) and exact depth reads over AMQP; every run talks to ' +
              `RabbitMQ and DynamoDB through the same delay proxy (+${flags.delay} ms a round trip).`,
          ],
        },
        goalsTable('distributor', [
          {
            goal: `distributor pass msg/s ÷ raw pump, ${flags.queues} queues, ${flags.delay} ms delay (median of rounds)`,
            target: '≥ 0.9',
            measured: `${median(goal).toFixed(2)} (rounds ${goal.map((r) => r.toFixed(2)).join(', ')})`,
            met: median(goal) >= 0.9,
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

/**
 * The order of a round's runs: the pass and the same-queues pump side by side, which goes first
 * alternating each round; the one-queue pump after them for two rounds, then before them for two.
 */
export function roundOrder(round: number): Run[] {
  const pair: Run[] = round % 2 === 0 ? ['fairway', 'rawSame'] : ['rawSame', 'fairway'];
  return Math.floor(round / 2) % 2 === 0 ? [...pair, 'raw1'] : ['raw1', ...pair];
}

/**
 * `perQueue` messages into each queue of every set in `sets`, and as many in all into each queue
 * of `single`, interleaved so that no queue is filled long before another.
 */
function* fill(sets: string[][], single: string[], perQueue: number, queues: number): Generator<Outgoing> {
  for (let i = 0; i < perQueue; i++) {
    for (let q = 0; q < queues; q++) {
      const content = taskMessage(`tenant${q}`, i);
      const options = { priority: 1 + (i % 9) };
      for (const set of sets) yield { queue: set[q]!, content, options };
      for (const queue of single) yield { queue, content, options };
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

/** How a pass's moves ended, e.g. "15 share-moved, 5 deadline", for an error. */
function stops(pass: PassSummary): string {
  const counts = new Map<string, number>();
  for (const q of pass.targets.flatMap((t) => t.queues)) {
    const reason = q.stopReason ?? 'not started';
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].map(([reason, n]) => `${n} ${reason}`).join(', ');
}

const list = (values: number[]) => values.map((v) => Math.round(v)).join(', ');
