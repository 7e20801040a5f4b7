import { connect } from 'amqplib';
import { loadDistributorConfig } from '../lib/distributor/config';
import { planTarget } from '../lib/distributor/planning/target-plan';
import { groupByTarget } from '../lib/distributor/planning/tenant-backlog';
import { configuredWeights } from '../lib/distributor/planning/weights';
import { ManagementClient, type QueueInfo } from '../lib/rabbitmq/management';
import { distributorSettings } from '../lib/wiring/distributor';
import { startDynamo } from '../local/embedded-dynamo';
import { publishConfirmed } from './lib/amqp';
import { type Benchmark, ratio } from './lib/benchmark';
import { countingFetch } from './lib/counters';
import { benchDistributor, WHOLE_BACKLOG_PASS } from './lib/distributor';
import { holding, waitForListing } from './lib/listing';
import { median, type Table, timed } from './lib/report';
import { seededRandom } from './lib/scenarios';
import { createBenchVhost } from './lib/services';

type Flags = 'queues' | 'targets' | 'planQueues' | 'repeats';

/**
 * SPEC §3 discovery: how many management API requests one real pass makes (DESIGN: one paged
 * listing per pass, never one request per queue), and how long planning takes for a large
 * listing compared with one management API round trip on the same broker.
 */
export const discoveryBench: Benchmark<Flags> = {
  name: 'discovery',
  summary: 'management API requests per pass, and planning time for many staging queues against one API round trip',
  flags: {
    queues: { quick: 1_200, tiny: 12, help: 'real staging queues (one message each) the measured pass discovers' },
    targets: { quick: 10, tiny: 2, help: 'targets those staging queues are spread over' },
    planQueues: { quick: 10_000, tiny: 200, help: 'staging queues in the synthetic listing that is planned' },
    repeats: { quick: 20, tiny: 3, help: 'timings repeated; the table shows medians' },
  },
  async run(flags, progress) {
    const vhost = await createBenchVhost('discovery');
    const dynamo = await startDynamo();
    const model = await connect(vhost.amqpUrl);
    try {
      await dynamo.createTables();
      const targets = Array.from({ length: flags.targets }, (_, i) => `worker-${i}-in`);
      const staging = Array.from(
        { length: flags.queues },
        (_, i) => `${targets[i % flags.targets]}»/tenant${i}/workflow`,
      );
      const channel = await model.createConfirmChannel();
      for (const name of [...targets, ...staging]) await channel.assertQueue(name, { durable: true });
      await publishConfirmed(
        channel,
        staging.map((queue) => ({ queue, content: Buffer.from('{}') })),
      );
      await channel.close();
      const management = new ManagementClient(vhost.managementUrl, vhost.vhost);
      await waitForListing(management, holding(staging, 1));
      progress(`${staging.length} staging queues over ${targets.length} targets listed`);

      const counter = countingFetch();
      const distributor = benchDistributor(
        loadDistributorConfig({
          AMQP_URL: vhost.amqpUrl,
          RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
          RABBITMQ_VHOST: vhost.vhost,
          DISTRIBUTOR_TABLE: 'DistributorStateTable',
          DYNAMODB_ENDPOINT: dynamo.endpoint,
          // One pass moves every staged message: what this bench checks before it counts requests.
          ...WHOLE_BACKLOG_PASS,
        }),
        progress,
        counter.fetch,
      );
      const pass = await timed(() => distributor.runPass(15 * 60_000));
      await distributor.close();
      if (pass.result.moved !== staging.length)
        throw new Error(`the pass moved ${pass.result.moved} of ${staging.length} messages`);
      progress(`pass moved ${pass.result.moved} messages in ${pass.seconds.toFixed(1)} s`);

      const roundTrip = await medianSeconds(flags.repeats, () => management.getQueue(staging[0]!));
      const listing = await medianSeconds(flags.repeats, () => management.listQueues());
      const oneTarget = syntheticListing(flags.planQueues, 1);
      const manyTargets = syntheticListing(flags.planQueues, 100);
      const planOne = await medianSeconds(flags.repeats, async () => plan(oneTarget));
      const planMany = await medianSeconds(flags.repeats, async () => plan(manyTargets));
      const totalQueues = targets.length + staging.length;
      const pages = Math.ceil(totalQueues / 500);

      const requests: Table = {
        title: `Discovery: management API requests in one pass over ${staging.length} staging queues of ${targets.length} targets`,
        rows: [
          ...[...counter.byPath()].map(([path, count]) => ({
            request: path.replace(vhost.vhost, '{vhost}'),
            'requests per pass': count,
          })),
          { request: 'all management API requests', 'requests per pass': counter.total() },
          { request: `one per queue (what DESIGN rules out)`, 'requests per pass': totalQueues },
        ],
        notes: [
          `Fairway ÷ one-per-queue: ${fmt(counter.total() / totalQueues)}. The listing is paged 500 queues a page ` +
            `(${pages} pages for ${totalQueues} queues); exact depths are then read over AMQP, ` +
            `not through the management API. The whole pass (moving one message per staging queue) took ${pass.seconds.toFixed(1)} s.`,
        ],
      };
      const planning: Table = {
        title: `Discovery: planning ${flags.planQueues} staging queues against one management API round trip`,
        rows: [
          {
            measured: 'one management API round trip (GET one queue)',
            'ms (median)': roundTrip * 1e3,
            '÷ round trip': 1,
          },
          {
            measured: `the pass's listing of ${totalQueues} queues (${pages} pages)`,
            'ms (median)': listing * 1e3,
            '÷ round trip': ratio(listing, roundTrip),
          },
          {
            measured: `plan ${flags.planQueues} staging queues, 1 target`,
            'ms (median)': planOne * 1e3,
            '÷ round trip': ratio(planOne, roundTrip),
          },
          {
            measured: `plan ${flags.planQueues} staging queues, 100 targets`,
            'ms (median)': planMany * 1e3,
            '÷ round trip': ratio(planMany, roundTrip),
          },
        ],
        notes: [
          'Planning = what a pass computes between the listing and the moves: group the listing by target, each ' +
            "target's capacity, weights, and Fairway's water-filling shares (depths from the listing; the pass " +
            're-reads them over AMQP, which is I/O and not counted here).',
        ],
      };
      return [requests, planning];
    } finally {
      await model.close().catch(() => undefined);
      await dynamo.stop();
      await vhost.delete();
    }
  },
};

/** The settings and weights a pass reads once, at cold start (the planner's defaults). */
const planSettings = distributorSettings(
  loadDistributorConfig({
    DISTRIBUTOR_TABLE: 'unused',
    AMQP_URL: 'amqp://unused',
    RABBITMQ_MANAGEMENT_URL: 'http://unused',
  }),
);
const planWeight = configuredWeights([{ pattern: 'worker-0-in»/tenant1/*', weight: 3 }]);

/** What a pass computes from a listing before it moves anything (planTarget, with depths from the listing). */
function plan(listing: QueueInfo[]): number {
  const depths = new Map(listing.map((q) => [q.name, q.messages_ready]));
  let planned = 0;
  for (const group of groupByTarget(listing)) {
    const targetPlan = planTarget(
      {
        target: group.target,
        ...(group.targetQueue ? { targetQueue: group.targetQueue } : {}),
        policies: { policies: [], operatorPolicies: [] },
        stagedMessageBytes: group.stagedMessageBytes,
        depth: group.targetQueue?.messages_ready ?? 0,
        staging: group.staging.map((name) => ({ name, depth: depths.get(name) ?? 0 })),
      },
      planSettings,
      planWeight,
    );
    if (targetPlan.outcome !== 'target-missing') for (const { share } of targetPlan.shares) planned += share;
  }
  return planned;
}

/** A listing of `count` staging queues with skewed depths over `targets` targets, plus the targets. */
function syntheticListing(count: number, targets: number): QueueInfo[] {
  const random = seededRandom(count + targets);
  const queue = (name: string, messages: number, args: Record<string, unknown> = {}): QueueInfo => ({
    name,
    durable: true,
    auto_delete: false,
    arguments: args,
    messages,
    messages_ready: messages,
  });
  const listing = Array.from({ length: targets }, (_, t) => queue(`worker-${t}-in`, 100, { 'x-max-length': 5_000 }));
  for (let i = 0; i < count; i++)
    listing.push(queue(`worker-${i % targets}-in»/tenant${i}/workflow`, Math.floor(1 / (random() + 0.001))));
  return listing;
}

async function medianSeconds(repeats: number, work: () => Promise<unknown>): Promise<number> {
  const seconds: number[] = [];
  for (let i = 0; i < repeats; i++) seconds.push((await timed(work)).seconds);
  return median(seconds);
}

const fmt = (value: number) => value.toPrecision(3);
