import { randomUUID } from 'node:crypto';
import { type ChannelModel, connect } from 'amqplib';
import { ManagementClient, managementPath } from '../lib/rabbitmq/management';
import { type RouterConfig, skipWindowMsOf } from '../lib/routing/config';
import { routerSettings } from '../lib/wiring/router';
import { paramResolver } from '../local/service';
import { publishConfirmed } from './lib/amqp';
import { type Benchmark, textFlag } from './lib/benchmark';
import { queueProcsBytes } from './lib/broker-memory';
import {
  afterProcessBody,
  deployFleet,
  type FleetDeployment,
  MEMORY_MB,
  stagingArguments,
  stagingQueueName,
} from './lib/fleet-deployment';
import {
  addUsage,
  costParts,
  dynamoRequestDollars,
  executionEndings,
  gbSeconds,
  IdleWhileStaged,
  monthlyPerTarget,
  monthlyPerTargetOf,
  PRICES_STATED,
  perMillion,
  pick,
  quantile,
  tenantWeights,
  type Usage,
} from './lib/fleet-metrics';
import { startTraffic, type TrafficEvent } from './lib/fleet-traffic';
import { TargetWorkers } from './lib/fleet-workers';
import {
  type BenchDynamo,
  type DynamoCounts,
  delayedVhost,
  dynamoReads,
  dynamoWrites,
  startBenchDynamo,
} from './lib/hops';
import { holding, waitForListing } from './lib/listing';
import { plainPath } from './lib/plain-path';
import { type Goal, goalsTable, type Row, type Table } from './lib/report';
import { seededRandom } from './lib/scenarios';
import { type BenchVhost, createBenchVhost } from './lib/services';
import { tenantMixCost } from './lib/tenant-mix';

type Flags =
  | 'tenants'
  | 'writeBatches'
  | 'targets'
  | 'queues'
  | 'workers'
  | 'rate'
  | 'busy'
  | 'light'
  | 'lightMaxLength'
  | 'memoryQueues'
  | 'memorySettle'
  | 'passTargets'
  | 'passQueues'
  | 'delay';

/** Target queues as the fleet's are declared: priorities, the router's staging queues copy them. */
const targetArguments = { 'x-max-priority': 9 };
const stagingQueueArguments = stagingArguments(targetArguments);
/** A serverless.yml param's value on the dev stage. */
const param = (name: string) => paramResolver('dev')(`$\{param:${name}}`);
const BATCH_SIZE = Number(param('routerBatchSize'));
const WINDOW_MS = Number(param('routerBatchingWindowSeconds')) * 1000;
/** Router invocations at once (a bench process that let them pile up would measure its own queueing). */
const ROUTER_CONCURRENCY = 4;
/** The fleet bench's runs, each in a stack of its own; `--parts` picks some (a run of one part is not for --write). */
const FLEET_PARTS = ['memory', 'writes', 'light', 'busy', 'pass'] as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const perMinute = (count: number, ms: number) => (count * 60_000) / ms;

/**
 * Issue 24: the fleet as deployed — N tenants over M targets with workers at fixed rates, traffic
 * at a fixed rate through the router and the distributor (schedule and passes on demand through
 * the local async-invoke endpoint), every AMQP, management and DynamoDB round trip through the
 * delay proxy — and what it costs: management API requests, broker memory per staging queue,
 * distributor executions in flight and GB-s, DynamoDB requests per event, targets' idle time, the
 * quiet tenants' wait, and US$ against the plain path (SQS → a Lambda publishing straight to the target).
 */
export const fleetBench: Benchmark<Flags> = {
  name: 'fleet',
  summary: 'the deployed fleet: management requests, broker memory, executions in flight, DynamoDB, idle workers, US$',
  flags: {
    tenants: { quick: 2_000, tiny: 20, help: 'tenants of the router-writes runs (Zipf and uniform)' },
    writeBatches: { quick: 10, tiny: 2, help: 'SQS batches of 100 events routed per tenant mix' },
    targets: { quick: 10, tiny: 2, help: 'busy targets (M), each backlogged, with workers at --workers' },
    queues: { quick: 4, tiny: 2, help: "staging queues per busy target (K): one backlogged tenant's, the rest quiet" },
    workers: { quick: 20, tiny: 20, help: "each busy target's workers, messages per second" },
    rate: { quick: 150, tiny: 20, help: 'events per second through the router in the busy run' },
    busy: { quick: 45, tiny: 3, help: 'seconds of the busy run (measured after a warm-up)' },
    light: { quick: 60, tiny: 3, help: 'seconds of light load (10 msg/s from 5 tenants) and its plain path' },
    lightMaxLength: {
      quick: 1_000,
      tiny: 1_000,
      help: "the light-load target's x-max-length, with the default overflow (drop-head); 0: no limit",
    },
    memoryQueues: { quick: 300, tiny: 10, help: 'staging queues declared to measure broker memory per queue' },
    memorySettle: { quick: 15, tiny: 0, help: 'seconds the broker is left to settle before each memory reading' },
    passTargets: { quick: 200, tiny: 3, help: 'targets of the one-pass run' },
    passQueues: { quick: 10, tiny: 2, help: 'one-message staging queues per target of the one-pass run' },
    delay: { quick: 1, tiny: 1, help: 'ms added to every round trip to RabbitMQ and DynamoDB (a delay proxy)' },
  },
  textFlags: { parts: `comma-separated subset of ${FLEET_PARTS.join(',')} (default all)` },
  async run(flags, report) {
    const parts = fleetParts(textFlag('parts'));
    const began = Date.now();
    const progress = (line: string) => report(`${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s ${line}`);
    process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite and the local endpoint accept any credentials
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const goals: Goal[] = [];
    const tables: Table[] = [];
    if (parts.has('memory')) {
      const memory = await inStack('fleet_memory', flags.delay, (stack) => brokerMemory(stack, flags, progress));
      goals.push(memory.goal);
      tables.push(memory.table);
    }
    if (parts.has('writes')) {
      const writes = await routerWrites(flags, progress);
      goals.push(...writes.goals);
      tables.push(...writes.tables);
    }
    if (parts.has('light')) {
      const light = await inStack('fleet_light', flags.delay, (stack) => lightLoad(stack, flags, progress));
      goals.push(...light.goals);
      tables.push(light.table);
    }
    if (parts.has('busy')) {
      const busy = await inStack('fleet_busy', flags.delay, (stack) => busyFleet(stack, flags, progress));
      goals.push(...busy.goals);
      tables.push(busy.table, ...busy.extra);
    }
    if (parts.has('pass')) {
      const pass = await inStack('fleet_pass', flags.delay, (stack) => onePass(stack, flags, progress));
      goals.push(pass.goal);
      tables.push(pass.table);
    }
    return [...tables, goalsTable('fleet', goals)];
  },
};

function fleetParts(text: string | undefined): Set<string> {
  const parts = text === undefined ? [...FLEET_PARTS] : text.split(',').map((part) => part.trim());
  const unknown = parts.filter((part) => !(FLEET_PARTS as readonly string[]).includes(part));
  if (unknown.length > 0) throw new Error(`--parts: unknown ${unknown.join(', ')}; one of ${FLEET_PARTS.join(', ')}`);
  if (text !== undefined && parts.length < FLEET_PARTS.length && process.argv.includes('--write')) {
    throw new Error('--parts with --write would drop the other parts from BENCHMARKS.md; run every part to write');
  }
  return new Set(parts);
}

/** A vhost, a DynamoDB and the delay proxy in front of both; a direct connection for the bench's own work. */
interface Stack {
  direct: BenchVhost;
  delayed: BenchVhost;
  dynamo: BenchDynamo;
  model: ChannelModel;
  deploy(
    options: {
      schedule: boolean;
      onDemand?: boolean;
      routerEnv?: Record<string, string>;
      distributorEnv?: Record<string, string>;
    },
    progress: (line: string) => void,
  ): Promise<FleetDeployment>;
}

async function inStack<T>(name: string, delay: number, work: (stack: Stack) => Promise<T>): Promise<T> {
  const direct = await createBenchVhost(name);
  const closers: (() => Promise<unknown>)[] = [() => deleteVhost(direct)];
  try {
    const dynamo = await startBenchDynamo(delay);
    closers.unshift(() => dynamo.stop());
    const delayed = await delayedVhost(direct, delay);
    closers.unshift(() => delayed.stopDelay());
    const model = await connect(direct.amqpUrl, { noDelay: true });
    closers.unshift(() => model.close().catch(() => undefined));
    const deploy: Stack['deploy'] = async (options, progress) => {
      const fleet = await deployFleet({
        vhost: delayed,
        dynamoEndpoint: dynamo.endpoint,
        routers: ROUTER_CONCURRENCY,
        progress,
        ...options,
      });
      closers.unshift(() => fleet.stop());
      return fleet;
    };
    return await work({ direct, delayed, dynamo, model, deploy });
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/**
 * Deleting a vhost of thousands of queues can outlast the management client's timeout while the
 * broker goes on deleting it: wait for it to be gone, asking again, for up to two minutes.
 */
async function deleteVhost(vhost: BenchVhost) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const error = await vhost.delete().then(
      () => undefined,
      (failure: Error) => failure,
    );
    const gone = await vhost.api('GET', managementPath('api', 'vhosts', vhost.vhost)).then(
      () => false,
      (failure: Error) => failure.message.includes('404'),
    );
    if (!error || gone) return;
    if (Date.now() > deadline) {
      console.error(`could not delete vhost ${vhost.vhost}: ${error.message}`);
      return;
    }
    await sleep(5_000);
  }
}

/** DynamoDB usage of one caller ('router' or 'distributor') since the last reset. */
async function dynamoOf(dynamo: BenchDynamo, caller: string): Promise<{ writes: number; reads: number }> {
  const ops = (await dynamo.counts()).byCaller.get(caller) ?? new Map<string, number>();
  const sum = (names: string[]) => names.reduce((total, op) => total + (ops.get(op) ?? 0), 0);
  return { writes: sum(dynamoWrites), reads: sum(dynamoReads) };
}

async function usageOf(fleet: FleetDeployment, dynamo: BenchDynamo) {
  const lambda = (of: FleetDeployment['router']) => ({ invocations: of.invocations, gbSeconds: of.gbSeconds });
  const router = await dynamoOf(dynamo, 'router');
  const distributor = await dynamoOf(dynamo, 'distributor');
  const usage = (l: ReturnType<typeof lambda>, d: typeof router): Usage => ({
    ...l,
    dynamoWrites: d.writes,
    dynamoReads: d.reads,
    sqsRequests: 0,
  });
  return { router: usage(lambda(fleet.router), router), distributor: usage(lambda(fleet.distributor), distributor) };
}

async function declareQueues(
  model: ChannelModel,
  names: readonly string[],
  args: Record<string, unknown> = targetArguments,
) {
  // Eight channels at once: a channel waits for each declare's answer before it sends the next.
  const queue = [...names];
  const declarer = async () => {
    const channel = await model.createChannel();
    for (let name = queue.shift(); name !== undefined; name = queue.shift())
      await channel.assertQueue(name, { durable: true, arguments: args });
    await channel.close();
  };
  await Promise.all(Array.from({ length: Math.min(8, names.length) }, declarer));
}

/**
 * Broker memory per staging queue: queue_procs as the router declared `memoryQueues` of them, each
 * holding its one routed message, then empty; beside as many plain queues holding the same message.
 */
async function brokerMemory(stack: Stack, flags: Record<Flags, number>, progress: (line: string) => void) {
  const target = 'memory-target';
  await declareQueues(stack.model, [target]);
  const fleet = await stack.deploy({ schedule: false, onDemand: false }, progress);
  const tenants = Array.from({ length: flags.memoryQueues }, (_, i) => `mem${i}`);
  const staging = tenants.map((tenantId) => stagingQueueName({ target, tenantId, workflowName: 'flow' }));
  // The broker settles a queue's memory some seconds after its last publish (paging, garbage collection).
  const settled = async () => {
    await sleep(flags.memorySettle * 1000);
    return queueProcsBytes(stack.direct);
  };
  const channel = await stack.model.createConfirmChannel();
  try {
    const before = await queueProcsBytes(stack.direct);
    for (let i = 0; i < tenants.length; i += BATCH_SIZE)
      await fleet.route(tenants.slice(i, i + BATCH_SIZE).map((t) => afterProcessBody(target, t, randomUUID())));
    const routedFull = await settled();
    // The control holds the message the router staged, properties and headers as they are.
    const sample = await channel.get(staging[0]!, { noAck: false });
    if (!sample) throw new Error(`broker memory: the router staged nothing in ${staging[0]}`);
    channel.nack(sample, false, true);
    for (const queue of staging) await channel.purgeQueue(queue);
    const routedEmpty = await settled();
    const plain = tenants.map((t) => `plain-${t}`);
    await declareQueues(stack.model, plain, {});
    await publishConfirmed(
      channel,
      plain.map((queue) => ({ queue, content: sample.content, options: { ...sample.properties } })),
    );
    const plainFull = await settled();
    for (const queue of plain) await channel.purgeQueue(queue);
    const plainEmpty = await settled();
    const kb = (bytes: number) => bytes / tenants.length / 1024;
    const figures = {
      stagingEmpty: kb(routedEmpty - before),
      stagingFull: kb(routedFull - before),
      plainEmpty: kb(plainEmpty - routedEmpty),
      plainFull: kb(plainFull - routedEmpty),
    };
    const message = figures.stagingFull - figures.stagingEmpty;
    progress(
      `broker memory: staging ${figures.stagingEmpty.toFixed(1)} KB empty, ${figures.stagingFull.toFixed(1)} KB with its message; ` +
        `plain ${figures.plainEmpty.toFixed(1)} / ${figures.plainFull.toFixed(1)} KB`,
    );
    return {
      goal: {
        goal: 'broker memory per staging queue (declared by the router; empty, and with one routed message)',
        target: '≤ 30 KB',
        measured:
          `${figures.stagingEmpty.toFixed(1)} KB empty; ${figures.stagingFull.toFixed(1)} KB with its message, of which the message ` +
          `${message.toFixed(1)} KB (a plain queue: ${figures.plainEmpty.toFixed(1)} KB empty, ${figures.plainFull.toFixed(1)} KB with the same message)`,
        met: figures.stagingEmpty <= 30,
      },
      table: {
        title: `Broker memory per staging queue: ${flags.memoryQueues} queues, node memory breakdown (queue_procs)`,
        rows: [
          {
            queues: 'staging, declared by the router (target has x-max-priority 9)',
            'KB per queue, empty': figures.stagingEmpty,
            'KB per queue, one message': figures.stagingFull,
          },
          {
            queues: 'control: declared directly, no arguments, the same message',
            'KB per queue, empty': figures.plainEmpty,
            'KB per queue, one message': figures.plainFull,
          },
        ],
        notes: [
          `queue_procs from GET /api/nodes/<node>?memory=true, the median of 3 readings, each ${flags.memorySettle} s after the ` +
            'last publish or purge (the broker pages and collects in that time), ÷ queues. The verdict is on the empty queue: ' +
            "what a staging queue itself costs, times every tenant × workflow × target; a waiting message's cost is the broker's " +
            'own, the same in the plain queue. The broker is shared with other tests: small counts are noisy.',
        ],
      } satisfies Table,
    };
  } finally {
    await channel.close();
  }
}

/** Router DynamoDB writes per event, 2,000 tenants Zipf and uniform, batches of 100, the pair as deployed. */
async function routerWrites(flags: Record<Flags, number>, progress: (line: string) => void) {
  const rows: Row[] = [];
  const goals: Goal[] = [];
  let steady: Awaited<ReturnType<typeof steadyWrites>> | undefined;
  const direct = await createBenchVhost('fleet_writes');
  const delayed = await delayedVhost(direct, flags.delay);
  const model = await connect(direct.amqpUrl);
  try {
    const targets = Array.from({ length: flags.targets }, (_, i) => `writes-target-${i}`);
    await declareQueues(model, targets);
    // Declared ahead, as a fleet's are: thousands of first declares at once would time the broker out, not the router.
    await declareQueues(
      model,
      Array.from({ length: flags.tenants }, (_, t) =>
        stagingQueueName({ target: targets[t % targets.length]!, tenantId: `tenant${t}`, workflowName: 'flow' }),
      ),
      stagingQueueArguments,
    );
    const dynamo = await startBenchDynamo(flags.delay);
    // Passes asked for and not run: the router's requests as deployed, without moves into targets nobody consumes.
    const fleet = await deployFleet({
      vhost: delayed,
      dynamoEndpoint: dynamo.endpoint,
      schedule: false,
      passes: 'skip',
      // This run routes its batches one at a time.
      routers: 1,
      progress,
    });
    try {
      const row = async (mix: string, events: number, failedBefore: number) => {
        const router = await dynamoOf(dynamo, 'router');
        const notRouted = fleet.notRouted() - failedBefore;
        rows.push({
          'tenant mix': mix,
          tenants: flags.tenants,
          events,
          'router writes/event': router.writes / events,
          'router reads/event': router.reads / events,
          'not routed': notRouted,
        });
        await dynamo.reset();
        return { writes: router.writes / events, notRouted };
      };
      // Warm-up, its own row: each tenant's first event (the container declares or checks its staging queue).
      await dynamo.reset();
      for (let i = 0; i < flags.tenants; i += BATCH_SIZE)
        await fleet.route(
          Array.from({ length: Math.min(BATCH_SIZE, flags.tenants - i) }, (_, k) =>
            afterProcessBody(targets[(i + k) % targets.length]!, `tenant${i + k}`, randomUUID()),
          ),
        );
      await row("cold: each tenant's first event, in turn", flags.tenants, 0);
      for (const [mix, s] of [
        ['Zipf (s = 1)', 1],
        ['uniform', 0],
      ] as const) {
        const weights = tenantWeights(flags.tenants, s);
        const random = seededRandom(24);
        const batch = () =>
          Array.from({ length: BATCH_SIZE }, () => {
            const tenant = pick(weights, random());
            return afterProcessBody(targets[tenant % targets.length]!, `tenant${tenant}`, randomUUID());
          });
        const failedBefore = fleet.notRouted();
        for (let i = 0; i < flags.writeBatches; i++) await fleet.route(batch());
        const { writes, notRouted } = await row(mix, flags.writeBatches * BATCH_SIZE, failedBefore);
        progress(`router writes, ${mix}, after a cold start: ${writes.toFixed(3)} per event, ${notRouted} not routed`);
        if (notRouted > 0)
          goals.push({
            goal: `router: every event routed, ${mix}`,
            target: '0 not routed',
            measured: `${notRouted}`,
            met: false,
          });
      }
      steady = await steadyWrites(dynamo, fleet.routerConfig, flags.tenants, progress);
      goals.push(...steady.goals);
    } finally {
      await fleet.stop();
      await dynamo.stop();
    }
  } finally {
    await model.close().catch(() => undefined);
    await delayed.stopDelay();
    await deleteVhost(direct);
  }
  return {
    goals,
    tables: [
      {
        title: `DynamoDB requests per event after a cold start: ${flags.tenants} tenants over ${flags.targets} targets, batches of ${BATCH_SIZE}`,
        rows,
        notes: [
          'The staging queues are declared ahead; the first row routes each tenant once (a cold container and cold ' +
            "counters), then each mix's batches are a warm router's (one container, the mixes one after the other). The router asks for passes as deployed " +
            '(through the async-invoke endpoint, which accepts them and runs none: nothing consumes these targets). ' +
            `These ${flags.writeBatches} batches a mix follow the cold start within seconds: most tenants are still counting ` +
            'towards saturation, so nearly every check writes. The goals are steady state: the next table.',
        ],
      },
      ...(steady ? [steady.table] : []),
    ] satisfies Table[],
  };
}

/** Events a second of the steady-state writes measure: the fleet (about 1,000 msg/s). */
const STEADY_RATE = 1_000;

/**
 * Router writes per event in steady state, the goal's measure: the router bench's tenant-mix run of
 * the store as deployed (container memory, the configured skip window) on the counters 25 minutes of
 * the same traffic leave, on a simulated clock at STEADY_RATE (bench/lib/tenant-mix.ts).
 */
async function steadyWrites(
  dynamo: BenchDynamo,
  config: RouterConfig,
  tenants: number,
  progress: (line: string) => void,
) {
  const table = await tenantMixCost(
    dynamo,
    routerSettings(config).priorityRules,
    {
      tenants: [tenants],
      distributions: ['zipf', 'uniform'],
      batch: BATCH_SIZE,
      rate: STEADY_RATE,
      skipWindowSeconds: skipWindowMsOf(config) / 1000,
      baselineSeconds: 0,
      containers: 1,
      stores: 'deployed',
    },
    progress,
  );
  const goals = (
    [
      ['zipf', 'Zipf (s = 1)', 0.1],
      ['uniform', 'uniform', 0.2],
    ] as const
  ).map(([distribution, mix, bound]): Goal => {
    const writes = Number(table.rows.find((r) => r.distribution === distribution)?.['writes per event']);
    return {
      goal: `router DynamoDB writes per event, steady state, ${tenants} tenants ${mix}, batches of ${BATCH_SIZE}, ${STEADY_RATE} events/s`,
      target: `≤ ${bound}`,
      measured: writes.toFixed(3),
      met: writes <= bound,
    };
  });
  return { goals, table };
}

/** The light load's warm-up before its window (at most the window): a deploy's first batches and schedule are not steady state. */
const LIGHT_WARM_UP_SECONDS = 20;
/** The seed's behaviour (SPEC §2: every message staged), the light load's second run (docs/router.md "Direct routing"). */
const OFF_ENV = { DIRECT_ROUTING: 'off' };

/**
 * 10 msg/s from 5 tenants: US$ per million messages beside the plain path, run twice on the same
 * stack, with the default settings and with DIRECT_ROUTING=off, each on a target of its own
 * (`lightMaxLength`, drop-head) and measured after a warm-up; and the vhost listings of on-demand passes.
 */
async function lightLoad(stack: Stack, flags: Record<Flags, number>, progress: (line: string) => void) {
  const byDefault = await lightRun(stack, flags, progress, 'default');
  const off = await lightRun(stack, flags, progress, 'off');
  const above = (run: LightRun) => perMillion(run.fairway, run.messages) - perMillion(run.plain, run.messages);
  const row = (path: string, u: Usage, messages: number): Row => ({
    path,
    'Lambda invocations': u.invocations,
    'GB-s': u.gbSeconds,
    'DynamoDB writes': u.dynamoWrites,
    'DynamoDB reads': u.dynamoReads,
    'US$ per million messages': perMillion(u, messages),
  });
  const rows = (run: LightRun): Row[] => [
    row(`${run.mode}: Fairway router`, run.router, run.messages),
    row(`${run.mode}: Fairway distributor`, run.distributor, run.messages),
    row(`${run.mode}: Fairway, both`, run.fairway, run.messages),
    row(`${run.mode}: plain path: SQS → Lambda publishing to the target with confirms`, run.plain, run.messages),
    {
      path: `${run.mode}: Fairway above the plain path`,
      'Lambda invocations': '',
      'GB-s': '',
      'DynamoDB writes': '',
      'DynamoDB reads': '',
      'US$ per million messages': above(run),
    },
  ];
  const note = (run: LightRun) =>
    `${run.mode}: ${run.messages} messages in ${Math.round(run.elapsedMs / 1000)} s, ${run.direct} of them routed direct; ` +
    `distributor invocations ${run.scheduled} scheduled, ${run.onDemand} on demand; management API requests ` +
    `${run.managementRequests}, of them vhost listings ${run.listings}. ${executionsNote(run.executions)} Cold (deploy and the ${run.warmUpSeconds} s warm-up, ` +
    `${run.cold.messages} messages): Fairway $${perMillion(run.cold.usage, run.cold.messages).toFixed(3)} per million, ` +
    `$${(perMillion(run.cold.usage, run.cold.messages) - perMillion(run.plain, run.messages)).toFixed(3)} above the window's plain path.`;
  const listings = off.onDemandListings + byDefault.onDemandListings;
  const onDemand = off.onDemand + byDefault.onDemand;
  return {
    goals: [
      {
        goal: `US$ per million messages above the plain path, light load (10 msg/s from 5 tenants), default settings, ${lightTarget(flags)}`,
        target: '≤ $0.10',
        measured: `$${above(byDefault).toFixed(3)} (Fairway $${perMillion(byDefault.fairway, byDefault.messages).toFixed(3)}, plain $${perMillion(byDefault.plain, byDefault.messages).toFixed(3)}; DIRECT_ROUTING off: $${above(off).toFixed(3)})`,
        met: above(byDefault) <= 0.1,
      },
      {
        goal: 'vhost listings by on-demand passes',
        target: '0',
        measured: `${listings} in ${onDemand} on-demand passes`,
        met: listings === 0,
      },
    ] satisfies Goal[],
    table: {
      title: `Light load: 10 msg/s from 5 tenants for ${flags.light} s after a ${off.warmUpSeconds} s warm-up, ${lightTarget(flags)}, default settings and DIRECT_ROUTING=off, US$ per million beside the plain path`,
      rows: [...rows(byDefault), ...rows(off)],
      notes: [
        `Prices: ${PRICES_STATED}. A DynamoDB request counts one request unit (items under 1 KB). SQS is the same ` +
          'in both paths (the same queue and batches) and left out of both. GB-s at 512 MB (serverless.yml memorySize), ' +
          'each invocation rounded up to the millisecond.',
        `Each run deploys afresh on a target of its own and routes for ${off.warmUpSeconds} s before its window opens (counts reset then), ` +
          `so the rows are steady state; the plain path replays the window's batches. \`default\`: what serverless.yml sets when no param is given (the distributor's DIRECT_ROUTING carries the router concurrency, here the bench's ${ROUTER_CONCURRENCY}); \`off\`: DIRECT_ROUTING=off for both functions.`,
        note(byDefault),
        note(off),
      ],
    } satisfies Table,
  };
}

/** The light-load target's limits, as the tables name them. */
const lightTarget = (flags: Record<Flags, number>) =>
  flags.lightMaxLength > 0
    ? `a target with x-max-length ${flags.lightMaxLength} (drop-head)`
    : 'a target without a length limit';

interface LightRun {
  mode: 'default' | 'off';
  messages: number;
  elapsedMs: number;
  warmUpSeconds: number;
  router: Usage;
  distributor: Usage;
  fairway: Usage;
  plain: Usage;
  cold: { usage: Usage; messages: number };
  direct: number;
  scheduled: number;
  onDemand: number;
  onDemandListings: number;
  managementRequests: number;
  listings: number;
  executions: ReturnType<FleetDeployment['executions']>;
}

/** What the window's distributor executions did: how long they ran and waited, grants written and revoked. */
function executionsNote(executions: LightRun['executions']): string {
  const sum = (of: (e: LightRun['executions'][number]) => number) => executions.reduce((n, e) => n + of(e), 0);
  return (
    `Executions ended in the window: ${executions.length}, ${(sum((e) => e.durationMs) / 1000).toFixed(1)} s in all, ` +
    `${(sum((e) => e.waitedMs) / 1000).toFixed(1)} s of it waiting; grants written ${sum((e) => e.grants)}, revoked ${sum((e) => e.revocations)}.`
  );
}

/** One light-load run: deploy, warm up, measure the window, then the window's batches on the plain path. */
async function lightRun(
  stack: Stack,
  flags: Record<Flags, number>,
  progress: (line: string) => void,
  mode: LightRun['mode'],
): Promise<LightRun> {
  const target = `light-target-${mode}`;
  const maxLength = flags.lightMaxLength > 0 ? { 'x-max-length': flags.lightMaxLength } : {};
  await declareQueues(stack.model, [target], { ...targetArguments, ...maxLength });
  const workers = new TargetWorkers(stack.model, target, 200);
  await workers.start();
  try {
    await stack.dynamo.reset();
    const settings = mode === 'off' ? OFF_ENV : {};
    const fleet = await stack.deploy({ schedule: true, routerEnv: settings, distributorEnv: settings }, progress);
    const tenants = Array.from({ length: 5 }, (_, i) => `light${i}`);
    let next = 0;
    const perWindow = Math.round((10 * WINDOW_MS) / 1000);
    const sent: TrafficEvent[][] = [];
    const traffic = startTraffic({
      arrivals: () => {
        const events = Array.from({ length: perWindow }, () => {
          const id = randomUUID();
          return { id, body: afterProcessBody(target, tenants[next++ % tenants.length]!, id) };
        });
        sent.push(events);
        return events;
      },
      windowMs: WINDOW_MS,
      batchSize: BATCH_SIZE,
      concurrency: ROUTER_CONCURRENCY,
      route: fleet.route,
    });
    const warmUpSeconds = Math.min(LIGHT_WARM_UP_SECONDS, flags.light);
    progress(`light load, DIRECT_ROUTING ${mode}: ${warmUpSeconds} s warm-up, then ${flags.light} s`);
    await sleep(warmUpSeconds * 1000);
    const coldUsage = await usageOf(fleet, stack.dynamo);
    const cold = { usage: addUsage(coldUsage.router, coldUsage.distributor), messages: traffic.events() };
    await stack.dynamo.reset();
    fleet.reset();
    const firstBatch = sent.length;
    const eventsBefore = traffic.events();
    const started = Date.now();
    await sleep(flags.light * 1000);
    await traffic.stop();
    const elapsedMs = Date.now() - started;
    const usage = await usageOf(fleet, stack.dynamo);
    const run = {
      mode,
      messages: traffic.events() - eventsBefore,
      elapsedMs,
      warmUpSeconds,
      router: usage.router,
      distributor: usage.distributor,
      fairway: addUsage(usage.router, usage.distributor),
      cold,
      direct: fleet.routerCounts.get('RoutedDirect') ?? 0,
      scheduled: fleet.distributor.byKind.get('distributor, scheduled') ?? 0,
      onDemand: fleet.distributor.byKind.get('distributor, on demand') ?? 0,
      onDemandListings: fleet.management.listings.get('distributor, on demand') ?? 0,
      managementRequests: fleet.management.total(fleet.management.requests),
      listings: fleet.management.total(fleet.management.listings),
      executions: fleet.executions(),
    };
    await fleet.stop();

    // The plain path: the window's batches, published straight to the target.
    const plainModel = await connect(stack.delayed.amqpUrl, { noDelay: true });
    const plain = await plainPath(plainModel);
    for (const batch of sent.slice(firstBatch)) await plain.route(batch.map((event) => event.body));
    await plain.close();
    await plainModel.close();
    return { ...run, plain: { ...plain.usage, dynamoWrites: 0, dynamoReads: 0, sqsRequests: 0 } };
  } finally {
    await workers.stop();
  }
}

/** M backlogged targets, K staging queues each (one backlogged tenant, the rest quiet), traffic at --rate. */
async function busyFleet(stack: Stack, flags: Record<Flags, number>, progress: (line: string) => void) {
  const targets = Array.from({ length: flags.targets }, (_, i) => `busy-target-${i}`);
  await declareQueues(stack.model, targets);
  const tenantsOf = (t: number) => Array.from({ length: flags.queues }, (_, q) => `t${t}q${q}`);
  const stagingOf = (t: number) =>
    tenantsOf(t).map((tenantId) => stagingQueueName({ target: targets[t]!, tenantId, workflowName: 'flow' }));
  // The backlog: enough for the workers through warm-up and run, in the heavy tenant's staging queue.
  const backlog = Math.ceil(flags.workers * (flags.busy + 20) * 1.2);
  const channel = await stack.model.createConfirmChannel();
  for (let t = 0; t < targets.length; t++) {
    for (const name of stagingOf(t))
      await channel.assertQueue(name, { durable: true, arguments: stagingQueueArguments });
    await publishConfirmed(
      channel,
      Array.from({ length: backlog }, (_, i) => ({
        queue: stagingOf(t)[0]!,
        content: Buffer.from('{"task":"backlog"}'),
        options: { messageId: `backlog-${t}-${i}` },
      })),
    );
  }
  await channel.close();
  progress(`busy: ${targets.length} targets, ${backlog} backlogged each`);
  const workers = targets.map((target) => new TargetWorkers(stack.model, target, flags.workers));
  for (const w of workers) await w.start();
  try {
    const fleet = await stack.deploy({ schedule: true }, progress);
    const random = seededRandom(17);
    const quiet = new Set<string>();
    const quietPerWindow = (targets.length * (flags.queues - 1) * WINDOW_MS) / 1000 / 2; // 0.5 msg/s each
    const traffic = startTraffic({
      arrivals: () => {
        const events: TrafficEvent[] = [];
        const total = Math.round((flags.rate * WINDOW_MS) / 1000);
        for (let i = 0; i < total; i++) {
          const t = Math.floor(random() * targets.length);
          const isQuiet = flags.queues > 1 && random() * total < quietPerWindow;
          const tenant = isQuiet ? tenantsOf(t)[1 + Math.floor(random() * (flags.queues - 1))]! : tenantsOf(t)[0]!;
          const id = randomUUID();
          if (isQuiet) quiet.add(id);
          events.push({ id, body: afterProcessBody(targets[t]!, tenant, id) });
        }
        return events;
      },
      windowMs: WINDOW_MS,
      batchSize: BATCH_SIZE,
      concurrency: ROUTER_CONCURRENCY,
      route: fleet.route,
    });
    await sleep(10_000); // warm-up: the schedule's first pass and the first requests have filled the targets
    await stack.dynamo.reset();
    fleet.reset();
    const eventsBefore = traffic.events();
    const started = Date.now();
    const idle = new IdleWhileStaged();
    const sampler = await stack.model.createChannel();
    while (Date.now() - started < flags.busy * 1000) {
      for (let t = 0; t < targets.length; t++) {
        let staged = 0;
        for (const name of stagingOf(t)) staged += (await sampler.checkQueue(name)).messageCount;
        idle.sample(targets[t]!, staged, workers[t]!.inHand());
      }
      await sleep(250);
    }
    await sampler.close();
    const elapsed = Date.now() - started;
    const events = traffic.events() - eventsBefore;
    const inFlight = fleet.inFlight.read();
    const read = await usageOf(fleet, stack.dynamo);
    // Billed within the window: invocations run up to a minute, longer than the window, so summing
    // those that ended in it counted some whole and others not at all (29 against 63 GB-s, same load).
    const billedGbSeconds = gbSeconds(inFlight.mean * elapsed, MEMORY_MB);
    const usage = { ...read, distributor: { ...read.distributor, gbSeconds: billedGbSeconds } };
    const dynamoKinds = (await stack.dynamo.counts()).byKind;
    const executions = fleet.executions();
    const management = fleet.management;
    const requestsPerMin = perMinute(management.total(management.requests), elapsed);
    const listingsPerMin = perMinute(management.total(management.listings), elapsed);
    const byKind = new Map(fleet.distributor.byKind);
    // The share of billed time the invocations waited before their pass (billed seconds = GB-s ÷ GB).
    const waiting = fleet.waitedSeconds() / Math.max(1e-9, (billedGbSeconds * 1024) / MEMORY_MB);
    await traffic.stop();
    const end = Date.now() + 5_000;
    const arrived = (id: string) => workers.some((w) => w.arrived.has(id));
    const quietIds = [...quiet].filter((id) => (traffic.handed.get(id) ?? 0) >= started);
    while (Date.now() < end && quietIds.some((id) => !arrived(id))) await sleep(200);
    const at = (id: string) => workers.map((w) => w.arrived.get(id)).find((v) => v !== undefined) ?? Date.now();
    const waits = quietIds.map((id) => at(id) - traffic.handed.get(id)!);
    const censored = quietIds.filter((id) => !arrived(id)).length;
    const p99 = quantile(waits, 0.99);
    const fractions = idle.fractions();
    const idleMax = Math.max(0, ...fractions.values());
    const idleMean = [...fractions.values()].reduce((a, b) => a + b, 0) / Math.max(1, fractions.size);
    const monthly = monthlyPerTarget(usage.distributor, elapsed, targets.length);
    const distributorPerEvent = {
      w: usage.distributor.dynamoWrites / events,
      r: usage.distributor.dynamoReads / events,
    };
    progress(
      `busy: ${inFlight.max} max in flight, mean ${inFlight.mean.toFixed(2)}, ${listingsPerMin.toFixed(1)} listings/min`,
    );
    const callerRows: Row[] = [...new Set([...management.requests.keys()])].map((caller) => ({
      caller,
      'management requests/min': perMinute(management.requests.get(caller) ?? 0, elapsed),
      'vhost listings/min': perMinute(management.listings.get(caller) ?? 0, elapsed),
      invocations: caller === 'router' ? fleet.router.invocations : (byKind.get(caller) ?? 0),
    }));
    const seconds = (ms: number) => `${censored ? '≥ ' : ''}${(ms / 1000).toFixed(2)} s`;
    return {
      goals: [
        {
          goal: `management API vhost listings per minute, steady state, ${targets.length} busy targets`,
          target: '≤ 1',
          measured: `${listingsPerMin.toFixed(1)} (${requestsPerMin.toFixed(0)} requests/min in all)`,
          met: listingsPerMin <= 1,
        },
        {
          goal: `distributor executions in flight, ${targets.length} busy targets`,
          target: '≤ 4',
          measured: `max ${inFlight.max}, mean ${inFlight.mean.toFixed(2)}`,
          met: inFlight.max <= 4,
        },
        {
          goal: 'every target idle while it has staged work',
          target: '< 5 % each',
          measured: `worst ${(idleMax * 100).toFixed(1)} %, mean ${(idleMean * 100).toFixed(1)} %`,
          met: idleMax < 0.05,
        },
        {
          goal: `US$ a month per backlogged target (distributor invocations, GB-s, DynamoDB; ${targets.length} targets)`,
          target: '≤ $2',
          measured: `$${monthly.toFixed(2)} (${costParts(usage.distributor, elapsed, targets.length)})`,
          met: monthly <= 2,
        },
      ] satisfies Goal[],
      table: {
        title: `Busy fleet: ${targets.length} backlogged targets × ${flags.queues} staging queues, workers ${flags.workers} msg/s each, ${flags.rate} events/s through the router, ${Math.round(elapsed / 1000)} s`,
        rows: [
          {
            'management requests/min': requestsPerMin,
            'vhost listings/min': listingsPerMin,
            'executions in flight, max': inFlight.max,
            'in flight, mean': inFlight.mean,
            'distributor GB-s': usage.distributor.gbSeconds,
            'billed time waiting': `${(waiting * 100).toFixed(0)} %`,
            'router DDB writes/event': usage.router.dynamoWrites / events,
            'router DDB reads/event': usage.router.dynamoReads / events,
            'distributor DDB writes/event': distributorPerEvent.w,
            'distributor DDB reads/event': distributorPerEvent.r,
            'idle while staged, worst': idleMax,
            'idle, mean': idleMean,
            'quiet p99 wait (s)': p99 / 1000,
            'US$/month per target': monthly,
          },
        ],
        notes: [
          `Window opens 10 s after deploy (the schedule's first pass and first requests have run). Events ${events}; ` +
            `quiet tenants' events ${waits.length} (0.5 msg/s each), p50 wait ${seconds(quantile(waits, 0.5))}, p99 ${seconds(p99)} ` +
            `(router handed the batch → first delivery to a worker; ${censored} not delivered 5 s after the end, counted with their wait so far).`,
          `Distributor invocations: ${byKind.get('distributor, scheduled') ?? 0} scheduled, ${byKind.get('distributor, on demand') ?? 0} on demand; ` +
            `${usage.distributor.gbSeconds.toFixed(1)} GB-s (512 MB × executions in flight over the window) in ${(elapsed / 1000).toFixed(0)} s. Executions in flight are concurrent handler ` +
            "runs at the async-invoke endpoint (no reserved-concurrency throttle; serverless.yml's is " +
            `${param('distributorReservedConcurrency')}). Idle: every 250 ms per target, of the samples where its staging ` +
            'queues held messages, the share where its workers held none (prefetch 50). ' +
            `Month = 30 days at this window's rate, ÷ ${targets.length} targets; prices: ${PRICES_STATED}.`,
        ],
      } satisfies Table,
      extra: [
        {
          title: 'Busy fleet: each target, while its staging queues held messages',
          rows: targets.map((target) => ({
            target,
            'samples with staged work': idle.samples(target),
            'idle (workers held nothing)': `${((fractions.get(target) ?? 0) * 100).toFixed(1)} %`,
          })),
        } satisfies Table,
        dynamoByKind(dynamoKinds, events, elapsed, targets.length),
        {
          title: 'Busy fleet: distributor executions that ended in the window, by how they ended',
          // A short window can end with every execution still refilling its busy targets: a row says so.
          rows:
            executions.length === 0
              ? [{ ending: 'none ended in the window', executions: 0 }]
              : executionEndings(executions).map((e) => ({
                  ending: e.ending,
                  executions: e.executions,
                  'rounds, mean': e.rounds / e.executions,
                  'target passes, mean': e.targetPasses / e.executions,
                  'duration (s), mean': e.durationMs / e.executions / 1000,
                })),
          notes: [
            'idle: nothing due within the wait bound (6 s); no-slot: every slot held; successor: near its time limit. ' +
              'An execution running when the window ends is not counted.',
          ],
        } satisfies Table,
        {
          title: 'Busy fleet: management API requests by caller',
          rows: callerRows.length
            ? callerRows
            : [{ caller: '(none)', 'management requests/min': 0, 'vhost listings/min': 0, invocations: 0 }],
        } satisfies Table,
      ],
    };
  } finally {
    for (const w of workers) await w.stop();
  }
}

/** The busy window's DynamoDB requests by caller, item kind and operation, the most first, with their cost per target. */
function dynamoByKind(byKind: DynamoCounts['byKind'], events: number, elapsedMs: number, targets: number): Table {
  const rows = [...byKind].flatMap(([caller, kinds]) =>
    [...kinds].map(([key, { requests, conditionFailed }]) => {
      const [kind, operation] = key.split('\t') as [string, string];
      const cost = dynamoRequestDollars(dynamoWrites.includes(operation), requests);
      return {
        caller,
        'item kind': kind,
        operation,
        requests,
        'condition failed': conditionFailed,
        'per event': requests / events,
        '/s per target': (requests * 1000) / elapsedMs / targets,
        'US$/month per target': monthlyPerTargetOf(cost, elapsedMs, targets),
      };
    }),
  );
  return {
    title: 'Busy fleet: DynamoDB requests by caller, item kind and operation',
    rows: rows.sort((a, b) => b.requests - a.requests),
    notes: [
      "Item kind: the table and the key's pk up to '#' (a work-board update by its purpose). A refused conditional write " +
        'is billed like any other. Cost at the prices above, a 30-day month ÷ the targets.',
    ],
  };
}

/** The buffer off (docs/distributor.md "Target buffer"): targets filled to their max length. */
const NO_BUFFER = { DISTRIBUTOR_BUFFER_HORIZON_MS: '0' };

/** 200 targets × 10 one-message staging queues: one scheduled pass, buffer off. */
async function onePass(stack: Stack, flags: Record<Flags, number>, progress: (line: string) => void) {
  const targets = Array.from({ length: flags.passTargets }, (_, i) => `pass-target-${i}`);
  await declareQueues(stack.model, targets);
  const staging = targets.flatMap((target, t) =>
    Array.from({ length: flags.passQueues }, (_, q) =>
      stagingQueueName({ target, tenantId: `p${t}q${q}`, workflowName: 'flow' }),
    ),
  );
  const channel = await stack.model.createConfirmChannel();
  await declareQueues(stack.model, staging, stagingQueueArguments);
  await publishConfirmed(
    channel,
    staging.map((queue) => ({ queue, content: Buffer.from('{"task":"pass"}') })),
  );
  await channel.close();
  await waitForListing(new ManagementClient(stack.direct.managementUrl, stack.direct.vhost), holding(staging, 1));
  // Throughput-only targets: with the buffer, a target whose workers took nothing keeps its start
  // depth (5) and the rest waits for them; this part measures one pass's reach over 2,000 queues.
  const fleet = await stack.deploy({ schedule: false, distributorEnv: NO_BUFFER }, progress);
  const started = Date.now();
  const summary = await fleet.scheduledPass();
  const seconds = (Date.now() - started) / 1000;
  const probe = await stack.model.createChannel();
  let inTargets = 0;
  for (const target of targets) inTargets += (await probe.checkQueue(target)).messageCount;
  await probe.close();
  const total = staging.length;
  const failedTargets = summary.targets.filter((t) => t.outcome === 'failed').length;
  const warnings = [...fleet.warnings].map(([message, n]) => `${n} × "${message}"`).join('; ');
  progress(`one pass: ${inTargets} of ${total} in the targets after ${seconds.toFixed(1)} s`);
  return {
    goal: {
      goal: `one scheduled pass over ${targets.length} targets × ${flags.passQueues} one-message staging queues moves all (buffer off)`,
      target: `${total} moved`,
      measured: `${inTargets} in the targets (pass said ${summary.moved}) in ${seconds.toFixed(1)} s`,
      met: inTargets === total,
    } satisfies Goal,
    table: {
      title: `One scheduled pass: ${targets.length} targets × ${flags.passQueues} one-message staging queues`,
      rows: [
        {
          'staging queues': total,
          'in targets after the pass': inTargets,
          'pass said moved': summary.moved,
          'pass (s)': seconds,
          'targets failed': failedTargets,
          'management requests': fleet.management.total(fleet.management.requests),
          'vhost listings': fleet.management.total(fleet.management.listings),
        },
      ],
      notes: [
        'The pass starts once the management listing shows every staging queue with its message; remaining time 60 s. ' +
          '"In targets" is counted when the scheduled invocation returns (passes it asked for may have run by then).',
        `Distributor warnings: ${warnings || 'none'}.`,
      ],
    } satisfies Table,
  };
}
