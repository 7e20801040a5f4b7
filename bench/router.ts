import { type ChannelModel, connect } from 'amqplib';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { AmqpSession } from '../lib/rabbitmq/connection';
import { ManagementClient } from '../lib/rabbitmq/management';
import { loadRouterConfig } from '../lib/routing/config';
import type { TenantCounterStore } from '../lib/routing/priority/counter-store';
import { checks, type TenantState } from '../lib/routing/priority/rules';
import type { RouterReport } from '../lib/routing/report';
import { CachedStagingQueues } from '../lib/routing/staging-queues';
import { createRouterService, routerSettings } from '../lib/wiring/router';
import { sqsEvent } from '../local/lambda-events';
import { type Outgoing, publishConfirmed, taskMessage } from './lib/amqp';
import type { Benchmark } from './lib/benchmark';
import { countingFetch } from './lib/counters';
import { type BenchDynamo, delayedVhost, dynamoReads, dynamoWrites, startBenchDynamo } from './lib/hops';
import { goalsTable, inRotation, median, roundRatios, type Table, timed } from './lib/report';
import { seededRandom } from './lib/scenarios';
import { type BenchVhost, createBenchVhost } from './lib/services';
import { tenantMixCost } from './lib/tenant-mix';

type Flags =
  | 'events'
  | 'batch'
  | 'tenants'
  | 'rounds'
  | 'writeBatches'
  | 'delay'
  | 'mixTenants'
  | 'distribution'
  | 'rate'
  | 'skipWindow'
  | 'baselineSeconds'
  | 'containers';

const target = 'dataprocessing-entity-extract-in';
const stagingOf = (tenant: string) => `${target}»/${tenant}/example_workflow`;

/**
 * SPEC §2 throughput: SQS batches of after-process events (Worker Framework task messages)
 * through the router's handler core, one invocation after another as one Lambda container
 * takes them, with dynalite and RabbitMQ; against raw publish-with-confirm of the same
 * messages to the same queues. Then DynamoDB writes per event by how many tenants share a batch.
 */
export const routerBench: Benchmark<Flags> = {
  name: 'router',
  summary: 'router events/s against raw publish-with-confirm, and DynamoDB writes per event',
  flags: {
    events: { quick: 10_000, tiny: 40, help: 'events routed per run' },
    batch: { quick: 100, tiny: 10, help: 'events per SQS batch (one invocation); 100 is the default batchSize' },
    tenants: { quick: 10, tiny: 3, help: 'tenants the throughput runs spread events over' },
    rounds: {
      quick: 5,
      tiny: 1,
      help: 'repetitions, the order rotated each round; rates are medians, ratios the median of per-round ratios',
    },
    writeBatches: { quick: 50, tiny: 3, help: 'batches routed per tenant mix when counting DynamoDB writes' },
    delay: { quick: 1, tiny: 1, help: 'ms added to every round trip to RabbitMQ and DynamoDB (a delay proxy)' },
    mixTenants: { quick: 2000, tiny: 20, help: 'cost by tenant mix: 10, 100 (those below it) and this many tenants' },
    distribution: { quick: 3, tiny: 1, help: 'tenant mix: 1 Zipf (s = 1), 2 uniform, 3 both' },
    rate: { quick: 1000, tiny: 10, help: 'events/s of the tenant-mix clock (the skip window is in its time)' },
    skipWindow: {
      quick: 60,
      tiny: 1,
      help: 'skip window (s) of the tenant-mix runs (deployed: derived from the reset interval)',
    },
    baselineSeconds: { quick: 10, tiny: 1, help: 'tenant-mix seconds measured on the stores that write every check' },
    containers: { quick: 1, tiny: 1, help: 'tenant-mix containers taking the batches in turn' },
  },
  async run(flags, progress) {
    process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite accepts any credentials; the SDK wants some
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const direct = await createBenchVhost('router');
    const vhost = await delayedVhost(direct, flags.delay);
    const dynamo = await startBenchDynamo(flags.delay);
    const model = await connect(vhost.amqpUrl, { noDelay: true });
    try {
      const setup = await model.createConfirmChannel();
      await setup.assertQueue(target, { durable: true, arguments: { 'x-max-priority': 9 } });
      const tenants = (count: number) => Array.from({ length: count }, (_, i) => `tenant${i}`);
      for (const tenant of tenants(Math.max(flags.tenants, 10)))
        await setup.assertQueue(stagingOf(tenant), { durable: true, arguments: { 'x-max-priority': 9 } });
      await setup.close();

      const events = batches(flags.events, flags.batch, tenants(flags.tenants));
      const raw = events.map((batch) => batch.Records.map(outgoingOf));
      const all = tenants(flags.tenants);
      // Every run's first batch is untimed: it opens the connection (and, for the router, declares
      // the staging queues), a cost a warm container paid once, before the batches that follow.
      const timedEvents = flags.events - events[0]!.Records.length;
      const rates = await inRotation(
        {
          router: async () => {
            const seconds = await warmContainer(routerService(vhost, dynamo.endpoint), events);
            await expectRouted(model, flags.events, all, 'the router');
            return timedEvents / seconds;
          },
          besidesDynamo: async () => {
            const seconds = await warmContainer(routerWithoutDynamo(vhost), events);
            await expectRouted(model, flags.events, all, 'the router without DynamoDB');
            return timedEvents / seconds;
          },
          rawBatched: async () => {
            const seconds = await publishInBatches(model, raw);
            await expectRouted(model, flags.events, all, 'raw batched publishing');
            return timedEvents / seconds;
          },
        },
        flags.rounds,
        progress,
      );

      const [router, besides, rawBatched] = [
        median(rates.router),
        median(rates.besidesDynamo),
        median(rates.rawBatched),
      ];
      const besidesRatios = roundRatios(rates.besidesDynamo, rates.rawBatched);
      const row = (run: string, rate: number, runs: number[]) => ({
        run,
        'events/s (median)': rate,
        'runs (events/s, by round)': runs.map(Math.round).join(', '),
        [`÷ raw, batches of ${flags.batch} (median of rounds)`]: median(roundRatios(runs, rates.rawBatched)),
        'Lambda ms per million events': (1e6 * 1e3) / rate,
      });
      const throughput: Table = {
        title: `Router throughput: ${flags.events} events (≈1 KB task messages) in SQS batches of ${flags.batch}, ${flags.tenants} tenants, ${flags.delay} ms round-trip delay`,
        rows: [
          row(`raw publish with confirm, ${flags.batch} per confirm wait, one channel`, rawBatched, rates.rawBatched),
          row(
            'Fairway router, its work besides DynamoDB (tenant checks answered in memory)',
            besides,
            rates.besidesDynamo,
          ),
          row('Fairway router handler core, 1 container: one batch after another', router, rates.router),
        ],
        notes: [
          'Each router invocation parses and validates the batch, checks each tenant in DynamoDB (one conditional write ' +
            "per tenant, in parallel), makes sure the staging queues exist (cached), publishes on the container's confirm " +
            `channel with the priority and waits for the confirms. The baseline publishes the same messages, ${flags.batch} ` +
            'per confirm wait, on one long-lived channel. "Besides DynamoDB" is the same router with a counter store that ' +
            'answers at once: the tenant check must finish before the publish (the priority is a publish property), so its ' +
            'round trip is the floor a batch cannot go under. Runs rotate their order each round, and a ratio is the ' +
            "median of per-round ratios (each round's runs side by side); every run goes through " +
            `the same delay proxy (+${flags.delay} ms a round trip), dynalite runs in its own process. Every run's ` +
            "first batch is untimed (a container's cold start: its connection and staging-queue declares; the raw " +
            'run opens its channel there); the rates count the batches after it.',
        ],
      };
      const writes = await writesPerEvent(vhost, dynamo, model, flags, tenants, progress);
      const tenMix = writes.rows.find((r) => r['tenants in the mix'] === 10);
      const mix = await tenantMixCost(
        dynamo,
        routerSettings(routerConfig(vhost, dynamo.endpoint)).priorityRules,
        {
          tenants: [...[10, 100].filter((n) => n < flags.mixTenants), flags.mixTenants],
          distributions: (['zipf', 'uniform'] as const).filter((_, i) => (flags.distribution & (1 << i)) !== 0),
          batch: flags.batch,
          rate: flags.rate,
          skipWindowSeconds: flags.skipWindow,
          baselineSeconds: flags.baselineSeconds,
          containers: flags.containers,
        },
        progress,
      );
      const skipped = (distribution: string) =>
        mix.rows.find(
          (r) => r.tenants === 2000 && r.distribution === distribution && /window \d/.test(String(r.store)),
        );
      const mixGoal = (distribution: string, target: number) => {
        const row = skipped(distribution);
        return {
          goal: `DynamoDB writes per event, 2,000 tenants ${distribution}, batches of ${flags.batch}, ${flags.containers} container(s) at ${flags.rate} events/s`,
          target: `≤ ${target}`,
          measured: row ? Number(row['writes per event']).toFixed(3) : 'not run',
          met: row !== undefined && Number(row['writes per event']) <= target,
        };
      };
      const coldBatch = await coldBatchCost(direct, flags.delay);
      return [
        throughput,
        writes,
        mix,
        coldBatch.table,
        goalsTable('router', [
          {
            goal: "router's work besides the DynamoDB round trip ÷ raw publish-with-confirm of the same batches (median of rounds)",
            target: '≥ 0.75',
            measured: `${median(besidesRatios).toFixed(2)} (rounds ${besidesRatios.map((r) => r.toFixed(2)).join(', ')}; medians ${Math.round(besides)} vs ${Math.round(rawBatched)} events/s)`,
            met: median(besidesRatios) >= 0.75,
          },
          {
            goal: `DynamoDB writes per event, 10-tenant mix, batches of ${flags.batch}`,
            target: '≤ 0.2',
            measured: tenMix ? Number(tenMix['writes per event']).toFixed(3) : 'not run',
            met: tenMix !== undefined && Number(tenMix['writes per event']) <= 0.2,
          },
          mixGoal('zipf', 0.1),
          mixGoal('uniform', 0.2),
          {
            goal: 'management API requests for a cold batch of 10 new staging queues of one target',
            // The target's shape, and the vhost's policies and operator policies (docs/router.md).
            target: '3',
            measured: String(coldBatch.managementRequests),
            met: coldBatch.managementRequests === 3,
          },
        ]),
      ];
    } finally {
      await model.close().catch(() => undefined);
      await dynamo.stop();
      await vhost.stopDelay();
      await direct.delete();
    }
  },
};

async function writesPerEvent(
  vhost: BenchVhost,
  dynamo: BenchDynamo,
  model: ChannelModel,
  flags: Record<Flags, number>,
  tenants: (count: number) => string[],
  progress: (line: string) => void,
): Promise<Table> {
  const rows = [];
  for (const tenantCount of [1, 3, 10]) {
    const events = batches(
      flags.writeBatches * flags.batch,
      flags.batch,
      tenants(tenantCount),
      seededRandom(tenantCount),
    );
    const service = routerService(vhost, dynamo.endpoint);
    await service.route(events[0]!); // the first check of each tenant resets its counter: not the steady state
    await dynamo.reset();
    const { seconds } = await timed(() => routeAll(service.route, events.slice(1)));
    await service.close();
    const routed = (events.length - 1) * flags.batch;
    await expectRouted(model, routed + flags.batch, tenants(tenantCount), `the router (${tenantCount} tenants)`);
    const counts = await dynamo.counts();
    const writes = counts.count(...dynamoWrites);
    const reads = counts.count(...dynamoReads);
    rows.push({
      'tenants in the mix': tenantCount,
      events: routed,
      'writes per event': writes / routed,
      'reads per event': reads / routed,
      'writes per million events': (writes / routed) * 1e6,
      'reads per million events': (reads / routed) * 1e6,
      'Lambda ms per million events': (seconds * 1e3 * 1e6) / routed,
      'events/s': routed / seconds,
    });
    progress(`${tenantCount} tenants: ${writes} writes, ${reads} reads for ${routed} events`);
  }
  return {
    title: `Router cost: DynamoDB requests and Lambda time per event, SQS batches of ${flags.batch} (tenants drawn at random)`,
    rows,
    notes: [
      "Counted by dynalite itself (in its own process), after a first batch that creates the tenants' counters. " +
        'SPEC §1 lets the k events of one tenant in a batch be one conditional write, so writes per event are the ' +
        `tenants present per batch ÷ ${flags.batch}. Lambda ms: one container routing batch after batch through the ` +
        'delay proxy (wall time, which Lambda bills), per million events. A batch only fills up to the batch size when ' +
        'events arrive faster than batch size ÷ batching window; below that, batches are smaller and writes per event ' +
        'rise toward tenants per batch ÷ events per batch, on a smaller total.',
    ],
  };
}

/** Management API requests and time for a cold batch: 10 new tenants of one target, first time the container sees them. */
async function coldBatchCost(direct: BenchVhost, delayMs: number) {
  const vhost = await delayedVhost(direct, delayMs);
  const counter = countingFetch();
  const amqp = new AmqpSession(vhost.amqpUrl);
  const stagingQueues = new CachedStagingQueues(
    amqp,
    new ManagementClient(vhost.managementUrl, vhost.vhost, counter.fetch),
    {},
    60_000,
    report,
  );
  try {
    const cold = Array.from({ length: 10 }, (_, i) => stagingOf(`cold${i}`));
    const { seconds } = await timed(() => Promise.all(cold.map((queue) => stagingQueues.ensure(queue, target))));
    return {
      managementRequests: counter.total(),
      table: {
        title: `Router: a cold batch of 10 new staging queues of one target, ${delayMs} ms delay`,
        rows: [
          { 'management API requests': counter.total(), 'AMQP declares': cold.length, 'ms to declare': seconds * 1e3 },
        ],
        notes: [
          "Concurrent cache misses for one target share one management request (the target's shape), and all " +
            "misses share one listing of the vhost's policies and operator policies (two requests, beside the " +
            "declares); the staging queues are declared on the container's long-lived channel, one round trip each.",
        ],
      },
    };
  } finally {
    await amqp.close();
    await vhost.stopDelay();
  }
}

/** Keeps the handler's logs and metrics out of the bench output; a failed record stops the bench. */
const report: RouterReport = {
  failed: (failure) => {
    throw new Error(`the router did not route ${failure.messageId}: ${failure.kind}, ${failure.reason}`);
  },
  counted: () => undefined,
  tenantRouted: () => undefined,
  tenantlessRouted: () => undefined,
  nameShortened: () => undefined,
  stagingQueueKept: () => undefined,
  passRequestFailed: () => undefined,
  directRoutingUnread: () => undefined,
};

function routerConfig(vhost: BenchVhost, dynamoEndpoint: string) {
  return loadRouterConfig({
    AMQP_URL: vhost.amqpUrl,
    RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
    RABBITMQ_VHOST: vhost.vhost,
    TENANT_TABLE: 'TenantCountersTable',
    DYNAMODB_ENDPOINT: dynamoEndpoint,
  });
}

function routerService(vhost: BenchVhost, dynamoEndpoint: string) {
  return createRouterService(routerConfig(vhost, dynamoEndpoint), report);
}

/** The router as its service builds it, but with tenant checks answered at once: all its work but DynamoDB's. */
function routerWithoutDynamo(vhost: BenchVhost) {
  const config = routerConfig(vhost, 'http://127.0.0.1:1');
  const states = new Map<string, TenantState>();
  const rules = routerSettings(config).priorityRules;
  // The same rules, on state kept in memory: the router's work without the DynamoDB round trip.
  const counters: TenantCounterStore = {
    check: async (tenant, k, nowMs) => {
      const result = checks(states.get(tenant), nowMs, k, rules);
      states.set(tenant, result.state);
      return result;
    },
  };
  return createRouterService(config, report, { counters });
}

async function routeAll(
  route: (event: SQSEvent) => Promise<{ batchItemFailures: unknown[] }>,
  events: SQSEvent[],
): Promise<void> {
  for (const event of events) {
    const { batchItemFailures } = await route(event);
    if (batchItemFailures.length > 0)
      throw new Error(`the router failed ${batchItemFailures.length} events of a batch`);
  }
}

/** `count` task messages of the given tenants (round robin, or drawn with `random`), as SQS batches of `size` (built before any timing). */
function batches(count: number, size: number, tenants: string[], random?: () => number): SQSEvent[] {
  const pick = (i: number) => tenants[random ? Math.floor(random() * tenants.length) : i % tenants.length]!;
  const bodies = Array.from({ length: count }, (_, i) => taskMessage(pick(i), i).toString('utf8'));
  return Array.from({ length: Math.ceil(count / size) }, (_, b) =>
    sqsEvent(bodies.slice(b * size, (b + 1) * size), 'after-process'),
  );
}

/** The message the router would publish for a record (tenant from its customData), for the raw baselines. */
function outgoingOf(record: SQSRecord): Outgoing {
  const tenant = /"taskId":"bench-([^"]+)-\d+"/.exec(record.body)![1]!;
  return { queue: stagingOf(tenant), content: Buffer.from(record.body), options: { priority: 9 } };
}

/** Publishes batch after batch on one channel, waiting for each batch's confirms; seconds for all but the first. */
async function publishInBatches(model: ChannelModel, batches: Outgoing[][]): Promise<number> {
  const channel = await model.createConfirmChannel();
  try {
    await publishConfirmed(channel, batches[0]!);
    return (
      await timed(async () => {
        for (const batch of batches.slice(1)) await publishConfirmed(channel, batch);
      })
    ).seconds;
  } finally {
    await channel.close();
  }
}

/** One container routing every batch, one after another; seconds for all but the first (its cold start). */
async function warmContainer(
  service: { route: (event: SQSEvent) => Promise<{ batchItemFailures: unknown[] }>; close(): Promise<void> },
  events: SQSEvent[],
): Promise<number> {
  try {
    await routeAll(service.route, events.slice(0, 1));
    return (await timed(() => routeAll(service.route, events.slice(1)))).seconds;
  } finally {
    await service.close();
  }
}

/** Checks the staging queues hold `expected` messages in all, then empties them for the next run. */
async function expectRouted(model: ChannelModel, expected: number, tenants: string[], what: string): Promise<void> {
  const channel = await model.createChannel();
  try {
    let held = 0;
    for (const tenant of tenants) held += (await channel.checkQueue(stagingOf(tenant))).messageCount;
    if (held !== expected)
      throw new Error(`after ${what} the staging queues hold ${held} messages; expected ${expected}`);
    for (const tenant of tenants) await channel.purgeQueue(stagingOf(tenant));
  } finally {
    await channel.close();
  }
}
