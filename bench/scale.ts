import { connect } from 'amqplib';
import { ManagementClient } from '../lib/rabbitmq/management';
import { publishConfirmed } from './lib/amqp';
import type { Benchmark } from './lib/benchmark';
import {
  benchDistributor,
  benchDistributorConfig,
  DISTRIBUTOR_TIMEOUT_MS,
  WHOLE_BACKLOG_PASS,
} from './lib/distributor';
import { delayedVhost, startBenchDynamo } from './lib/hops';
import { waitForListing } from './lib/listing';
import { goalsTable, type Row, timed } from './lib/report';
import { createBenchVhost } from './lib/services';

type Flags = 'queues' | 'delay';

const target = 'dataprocessing-entity-extract-in';
/** The goal: a pass over 5,000 one-message staging queues of one target, with a 1 ms delay. */
const GOAL_QUEUES = 5_000;
const GOAL_SECONDS = 10;

/**
 * SPEC §3 at deployed scale: one pass over many one-message staging queues of one target, where
 * the cost is per queue (listing, depth read, a mover), not per message. Pass time at 100, 1,000
 * and `--queues` staging queues, straight to the services and through the delay proxy.
 */
export const scaleBench: Benchmark<Flags> = {
  name: 'scale',
  summary: 'distribution pass time against the number of one-message staging queues, with and without a delay',
  flags: {
    queues: { quick: GOAL_QUEUES, tiny: 20, help: 'staging queues of the largest pass (100 and 1,000 are run too)' },
    delay: { quick: 1, tiny: 1, help: 'ms added to every round trip to RabbitMQ and DynamoDB in the delayed runs' },
  },
  async run(flags, progress) {
    const sizes = [...new Set([100, 1_000, flags.queues].filter((n) => n <= flags.queues))];
    const staging = Array.from({ length: flags.queues }, (_, i) => `${target}»/tenant${i}/workflow`);
    const direct = await createBenchVhost('scale');
    const model = await connect(direct.amqpUrl, { noDelay: true });
    const management = new ManagementClient(direct.managementUrl, direct.vhost);
    const rows: Row[] = [];
    const goals = [];
    try {
      const channel = await model.createConfirmChannel();
      await channel.assertQueue(target, { durable: true, arguments: { 'x-max-priority': 9 } });
      for (const name of staging) await channel.assertQueue(name, { durable: true });
      progress(`${staging.length} staging queues declared`);
      for (const delay of [0, flags.delay]) {
        const vhost = await delayedVhost(direct, delay);
        const dynamo = await startBenchDynamo(delay);
        try {
          for (const size of sizes) {
            const distributor = benchDistributor(
              benchDistributorConfig(vhost, dynamo.endpoint, {
                DISTRIBUTOR_DEFAULT_MAX_LENGTH: String(2 * flags.queues),
                ...WHOLE_BACKLOG_PASS,
              }),
              progress,
            );
            await publishConfirmed(
              channel,
              staging.slice(0, size).map((queue) => ({ queue, content: Buffer.from('{}') })),
            );
            await waitForListing(management, new Map(staging.map((name, i) => [name, i < size ? 1 : 0])));
            const { result, seconds } = await timed(() => distributor.runPass(DISTRIBUTOR_TIMEOUT_MS));
            await distributor.close();
            const { messageCount } = await channel.checkQueue(target);
            await channel.purgeQueue(target);
            progress(`${size} queues, ${delay} ms: moved ${result.moved} in ${seconds.toFixed(2)} s`);
            rows.push({
              'staging queues': size,
              'delay (ms)': delay,
              'pass (s)': seconds,
              moved: result.moved,
              'in target': messageCount,
              'ms per queue': (seconds * 1e3) / size,
            });
            if (size === GOAL_QUEUES && delay === 1) {
              goals.push({
                goal: `pass over ${size} one-message staging queues of one target, 1 ms delay`,
                target: `≤ ${GOAL_SECONDS} s, all moved`,
                measured: `${seconds.toFixed(1)} s, ${result.moved} moved`,
                met: seconds <= GOAL_SECONDS && result.moved === size,
              });
            }
            // Whatever a pass left (when it ran out of budget) would skew the next size.
            for (const name of staging.slice(0, size)) await channel.purgeQueue(name);
          }
        } finally {
          await dynamo.stop();
          await vhost.stopDelay();
        }
      }
      await channel.close();
    } finally {
      await model.close().catch(() => undefined);
      await direct.delete();
    }
    return [
      {
        title: `Distribution pass time by number of one-message staging queues (one target), ${flags.delay} ms delay or none`,
        rows,
        notes: [
          `Each pass runs as the deployed function does (remaining time ${DISTRIBUTOR_TIMEOUT_MS / 1000} s, default ` +
            'settings): listing, lease, exact depth reads, plan, moves. A pass starts once the management listing ' +
            'shows exactly the filled queues. "Delay" adds that many ms to every round trip to RabbitMQ (AMQP and ' +
            'management API) and DynamoDB through a proxy in its own process, as a network hop does.',
        ],
      },
      ...(goals.length > 0 ? [goalsTable('scale', goals)] : []),
    ];
  },
};
