import { type ChannelModel, connect } from 'amqplib';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { loadRouterConfig } from '../lib/config/router';
import type { RouterReport } from '../lib/routing/router';
import { createRouterService } from '../lib/routing/service';
import { type EmbeddedDynamo, startDynamo } from '../local/embedded-dynamo';
import { sqsEvent } from '../local/lambda-events';
import { type Outgoing, publishConfirmed, taskMessage } from './lib/amqp';
import { type Benchmark, ratio } from './lib/benchmark';
import { countingDynamoProxy, dynamoWrites } from './lib/dynamo-proxy';
import { median, type Table, timed } from './lib/report';
import { type BenchVhost, createBenchVhost } from './lib/services';

type Flags = 'events' | 'batch' | 'tenants' | 'containers' | 'rounds' | 'writeBatches';

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
    batch: { quick: 10, tiny: 10, help: 'events per SQS batch (one invocation)' },
    tenants: { quick: 10, tiny: 3, help: 'tenants the throughput runs spread events over' },
    containers: { quick: 4, tiny: 2, help: 'Lambda containers routing batches at once in the scaled-out run' },
    rounds: { quick: 2, tiny: 1, help: 'repetitions; the table shows the median' },
    writeBatches: { quick: 200, tiny: 3, help: 'batches routed per tenant mix when counting DynamoDB writes' },
  },
  async run(flags, progress) {
    process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite accepts any credentials; the SDK wants some
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const vhost = await createBenchVhost('router');
    const dynamo = await startDynamo();
    const model = await connect(vhost.amqpUrl);
    try {
      await dynamo.createTables();
      const setup = await model.createConfirmChannel();
      await setup.assertQueue(target, { durable: true, arguments: { 'x-max-priority': 9 } });
      const tenants = (count: number) => Array.from({ length: count }, (_, i) => `tenant${i}`);
      for (const tenant of tenants(Math.max(flags.tenants, 10)))
        await setup.assertQueue(stagingOf(tenant), { durable: true, arguments: { 'x-max-priority': 9 } });
      await setup.close();

      const events = batches(flags.events, flags.batch, tenants(flags.tenants));
      const rates = {
        router: [] as number[],
        scaled: [] as number[],
        rawBatched: [] as number[],
        rawChannelPerBatch: [] as number[],
        rawPipelined: [] as number[],
      };
      for (let round = 0; round < flags.rounds; round++) {
        const routed = await timed(() => routeInContainers(vhost, dynamo.endpoint, events, 1));
        rates.router.push(flags.events / routed.seconds);
        await expectRouted(model, flags.events, tenants(flags.tenants), 'the router');

        const scaled = await timed(() => routeInContainers(vhost, dynamo.endpoint, events, flags.containers));
        rates.scaled.push(flags.events / scaled.seconds);
        await expectRouted(model, flags.events, tenants(flags.tenants), 'the router in several containers');

        const raw = events.map((batch) => batch.Records.map(outgoingOf));
        const batched = await timed(() => publishInBatches(model, raw, false));
        rates.rawBatched.push(flags.events / batched.seconds);
        await expectRouted(model, flags.events, tenants(flags.tenants), 'raw batched publishing');

        const channelPerBatch = await timed(() => publishInBatches(model, raw, true));
        rates.rawChannelPerBatch.push(flags.events / channelPerBatch.seconds);
        await expectRouted(model, flags.events, tenants(flags.tenants), 'raw batched publishing, a channel per batch');

        const channel = await model.createConfirmChannel();
        const pipelined = await timed(() => publishConfirmed(channel, raw.flat()));
        await channel.close();
        rates.rawPipelined.push(flags.events / pipelined.seconds);
        await expectRouted(model, flags.events, tenants(flags.tenants), 'raw pipelined publishing');
        progress(
          `round ${round + 1}: router ${routed.seconds.toFixed(2)} s, ${flags.containers} containers ${scaled.seconds.toFixed(2)} s, raw batched ${batched.seconds.toFixed(2)} s, raw pipelined ${pipelined.seconds.toFixed(2)} s`,
        );
      }

      const [router, rawBatched, rawPipelined] = [
        median(rates.router),
        median(rates.rawBatched),
        median(rates.rawPipelined),
      ];
      const row = (run: string, rate: number, runs: number[]) => ({
        run,
        'events/s (median)': rate,
        'runs (events/s)': runs.map(Math.round).join(', '),
        [`÷ raw, batches of ${flags.batch}`]: ratio(rate, rawBatched),
        '÷ raw, pipelined': ratio(rate, rawPipelined),
      });
      const throughput: Table = {
        title: `Router throughput: ${flags.events} events (≈1 KB task messages) in SQS batches of ${flags.batch}, ${flags.tenants} tenants`,
        rows: [
          row(`raw publish with confirm, ${flags.batch} per confirm wait, one channel`, rawBatched, rates.rawBatched),
          row(
            `raw publish with confirm, ${flags.batch} per confirm wait, a new channel per batch`,
            median(rates.rawChannelPerBatch),
            rates.rawChannelPerBatch,
          ),
          row('raw publish with confirm, all pipelined, one channel', rawPipelined, rates.rawPipelined),
          row('Fairway router handler core, 1 container: one batch after another', router, rates.router),
          row(
            `Fairway router handler core, ${flags.containers} containers at once`,
            median(rates.scaled),
            rates.scaled,
          ),
        ],
        notes: [
          'Each router invocation parses and validates the batch, checks each tenant in DynamoDB (dynalite, in process), ' +
            "makes sure the staging queues exist (cached), publishes on the container's confirm channel with the priority and " +
            `waits for the confirms. The like-for-like baseline publishes the same messages, ${flags.batch} per confirm ` +
            "wait, on one long-lived channel; pipelined is the broker's ceiling, which a batch-at-a-time Lambda cannot reach. " +
            'Lambda scales the router out instead: the SQS event source runs several batches at once, one per container ' +
            '(here each container has its own AMQP connection and DynamoDB client, all in this one process).',
        ],
      };
      return [throughput, await writesPerEvent(vhost, dynamo, model, flags, tenants, progress)];
    } finally {
      await model.close().catch(() => undefined);
      await dynamo.stop();
      await vhost.delete();
    }
  },
};

async function writesPerEvent(
  vhost: BenchVhost,
  dynamo: EmbeddedDynamo,
  model: ChannelModel,
  flags: Record<Flags, number>,
  tenants: (count: number) => string[],
  progress: (line: string) => void,
): Promise<Table> {
  const proxy = await countingDynamoProxy(dynamo.endpoint);
  const rows = [];
  try {
    for (const tenantCount of [1, 3, 10]) {
      const events = batches(flags.writeBatches * flags.batch, flags.batch, tenants(tenantCount));
      const service = routerService(vhost, proxy.endpoint);
      await service.route(events[0]!); // the first check of each tenant resets its counter: not the steady state
      proxy.reset();
      const { seconds } = await timed(() => routeAll(service.route, events.slice(1)));
      await service.close();
      const routed = (events.length - 1) * flags.batch;
      await expectRouted(model, routed + flags.batch, tenants(tenantCount), `the router (${tenantCount} tenants)`);
      const writes = proxy.count(...dynamoWrites);
      rows.push({
        'tenants per batch': Math.min(tenantCount, flags.batch),
        events: routed,
        'DynamoDB writes': writes,
        'writes per event': writes / routed,
        'other DynamoDB requests': proxy.total() - writes,
        'events/s': routed / seconds,
        'time in DynamoDB ÷ run time': proxy.waitedMs() / 1e3 / seconds,
      });
      progress(`${tenantCount} tenants: ${writes} writes for ${routed} events`);
    }
  } finally {
    await proxy.close();
  }
  return {
    title: `Router: DynamoDB writes per event, SQS batches of ${flags.batch}`,
    rows,
    notes: [
      "Counted on the wire (a proxy in front of dynalite), after a first batch that creates the tenants' counters. " +
        'SPEC §1 lets the k events of one tenant in a batch be one conditional write, so the floor is ' +
        `tenants per batch ÷ ${flags.batch}. events/s here includes the proxy hop; time in DynamoDB sums the ` +
        "requests' durations (a batch's tenants are checked in parallel, so it can exceed 1).",
    ],
  };
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
};

function routerService(vhost: BenchVhost, dynamoEndpoint: string) {
  return createRouterService(
    loadRouterConfig({
      AMQP_URL: vhost.amqpUrl,
      RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
      RABBITMQ_VHOST: vhost.vhost,
      TENANT_TABLE: 'TenantCountersTable',
      DYNAMODB_ENDPOINT: dynamoEndpoint,
    }),
    report,
  );
}

/** Routes every batch, `containers` router services taking the next batch as each finishes one. */
async function routeInContainers(
  vhost: BenchVhost,
  dynamoEndpoint: string,
  events: SQSEvent[],
  containers: number,
): Promise<void> {
  const queue = [...events];
  await Promise.all(
    Array.from({ length: containers }, async () => {
      const service = routerService(vhost, dynamoEndpoint);
      try {
        for (let event = queue.shift(); event; event = queue.shift()) await routeAll(service.route, [event]);
      } finally {
        await service.close();
      }
    }),
  );
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

/** `count` task messages of the given tenants, round robin, as SQS batches of `size` (built before any timing). */
function batches(count: number, size: number, tenants: string[]): SQSEvent[] {
  const bodies = Array.from({ length: count }, (_, i) => taskMessage(tenants[i % tenants.length]!, i).toString('utf8'));
  return Array.from({ length: Math.ceil(count / size) }, (_, b) =>
    sqsEvent(bodies.slice(b * size, (b + 1) * size), 'after-process'),
  );
}

/** The message the router would publish for a record (tenant from its customData), for the raw baselines. */
function outgoingOf(record: SQSRecord): Outgoing {
  const tenant = /"taskId":"bench-([^"]+)-\d+"/.exec(record.body)![1]!;
  return { queue: stagingOf(tenant), content: Buffer.from(record.body), options: { priority: 9 } };
}

/** Publishes batch after batch, waiting for each batch's confirms; `channelPerBatch` as the router does per invocation. */
async function publishInBatches(model: ChannelModel, batches: Outgoing[][], channelPerBatch: boolean): Promise<void> {
  let channel = await model.createConfirmChannel();
  try {
    for (const batch of batches) {
      if (channelPerBatch) {
        await channel.close();
        channel = await model.createConfirmChannel();
      }
      await publishConfirmed(channel, batch);
    }
  } finally {
    await channel.close();
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
