import { randomUUID } from 'node:crypto';
import { type Channel, type ChannelModel, connect } from 'amqplib';
import type { ScheduledEvent } from 'aws-lambda';
import { loadDistributorConfig } from '../lib/config/distributor';
import { loadRouterConfig } from '../lib/config/router';
import type { ExecutionSummary } from '../lib/distributor/report';
import { createDistributorService, distributorInvocation, warningReport } from '../lib/distributor/service';
import type { WorkEvent } from '../lib/pass-requests/pass-trigger';
import { stagingQueueName } from '../lib/queues/staging-names';
import { createRouterService } from '../lib/routing/service';
import { lambdaContext, scheduledEvent, sqsEvent } from '../local/lambda-events';
import { startLambdaInvokeServer } from '../local/lambda-invoke-server';
import { serviceFunctions } from '../local/service';
import { Scheduler } from '../local/stack/scheduler';
import { memoryStagingRegistry } from '../test/harness/staging-registry';
import { publishConfirmed } from './lib/amqp';
import type { Benchmark } from './lib/benchmark';
import { delayedVhost, startBenchDynamo } from './lib/hops';
import type { Row } from './lib/report';
import { createBenchVhost } from './lib/services';

type Flags = 'light' | 'baseline' | 'heavy' | 'idle' | 'workers' | 'tenants';

const target = 'worker-input';
const maxLength = 1_000;
const functionName = 'fairway-bench-distributor';
/** Router invocations at once at most; a bench process that let them pile up would measure its own queueing. */
const maxRouterConcurrency = 4;

/**
 * Issue 17: how long a message waits for the distributor, and whether fast workers starve, in the
 * deployed shape: the router and distributor handlers' cores (no logging middlewares), the
 * distributor's schedule from serverless.yml, passes on demand through the real Lambda client
 * against a local async-invoke endpoint, workers consuming at a set rate, and every AMQP, management
 * API and DynamoDB round trip through a ~1 ms delay proxy. The same light load runs with passes on
 * the schedule alone, as the baseline.
 */
export const latencyBench: Benchmark<Flags> = {
  name: 'latency',
  summary: 'router-invocation → in-target latency and worker starvation, on demand vs the 1-minute schedule',
  flags: {
    light: { quick: 30, tiny: 3, help: 'seconds of light load with passes on demand (10 documents/s)' },
    baseline: { quick: 65, tiny: 2, help: 'seconds of the same light load with passes on the schedule alone' },
    heavy: { quick: 45, tiny: 3, help: 'seconds of heavy load (every tenant backlogged, routers adding 100/s)' },
    idle: { quick: 60, tiny: 1, help: 'seconds with no traffic (cost at idle)' },
    workers: { quick: 200, tiny: 200, help: "the workers' rate, messages per second" },
    tenants: { quick: 5, tiny: 2, help: 'tenants, one staging queue each' },
  },
  async run(flags, progress) {
    process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite and the local endpoint accept any credentials
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const vhost = await createBenchVhost('latency');
    const closers: (() => Promise<unknown>)[] = [() => vhost.delete()];
    try {
      // dynalite in a process of its own, counting requests; it and the broker behind ~1 ms proxies.
      const dynamo = await startBenchDynamo(1);
      closers.unshift(() => dynamo.stop());
      const delayed = await delayedVhost(vhost, 1);
      closers.unshift(() => delayed.stopDelay());

      const model = await connect(vhost.amqpUrl);
      closers.unshift(() => model.close().catch(() => undefined));
      const setup = await model.createConfirmChannel();
      await setup.assertQueue(target, {
        durable: true,
        arguments: { 'x-max-length': maxLength, 'x-max-priority': 9 },
      });
      const tenants = Array.from({ length: flags.tenants }, (_, i) => `tenant${i}`);
      const staging = tenants.map((tenantId) => stagingQueueName({ target, tenantId, workflowName: 'flow' }));
      for (const name of staging) await setup.assertQueue(name, { durable: true });

      const baseEnv = {
        AMQP_URL: delayed.amqpUrl,
        RABBITMQ_MANAGEMENT_URL: delayed.managementUrl,
        RABBITMQ_VHOST: vhost.vhost,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        TENANT_TABLE: 'TenantCountersTable',
        DISTRIBUTOR_TABLE: 'DistributorStateTable',
        DISTRIBUTOR_SAFETY_MARGIN_MS: '10000', // as serverless.yml sets it
      };
      const distributorFn = serviceFunctions('dev').find((fn) => fn.name === 'distributor')!;
      // In memory until the staging helper's DynamoDB adapter lands: the router here records nothing in
      // it, so the schedule's backstop listing (at deploy) records the staging queues.
      const registry = memoryStagingRegistry();
      const workers = new Workers(model, target, flags.workers);
      await workers.start();
      closers.unshift(() => workers.stop());

      /** The deployed pair for one phase: on demand (async invokes through the local endpoint) or schedule only. */
      const deploy = async (onDemand: boolean) => {
        const invocations = { scheduled: 0, requested: 0, busyMs: 0, failed: 0 };
        let runInvocation: (event: ScheduledEvent | WorkEvent) => Promise<ExecutionSummary>;
        const invokeServer = await startLambdaInvokeServer(
          async (_name, event) => {
            invocations.requested++;
            return runInvocation(event as WorkEvent);
          },
          () => invocations.failed++,
        );
        const env = {
          ...baseEnv,
          ...(onDemand ? { DISTRIBUTOR_FUNCTION_NAME: functionName, LAMBDA_ENDPOINT: invokeServer.endpoint } : {}),
        };
        const warn = warningReport((message, details) =>
          progress(`distributor: ${message} ${JSON.stringify(details)}`),
        );
        const distributorConfig = loadDistributorConfig(env);
        const distributor = createDistributorService(distributorConfig, warn, { registry });
        const invocation = distributorInvocation(distributor);
        runInvocation = async (event) => {
          const started = performance.now();
          try {
            return await invocation(event, lambdaContext(distributorFn.deployedName, distributorFn.timeoutSeconds));
          } finally {
            invocations.busyMs += performance.now() - started;
          }
        };
        const router = createRouterService(loadRouterConfig(env), {
          failed: (failure) => progress(`router: not routed ${failure.kind} ${failure.reason}`),
          counted: () => undefined,
          tenantRouted: () => undefined,
          stagingQueueKept: () => undefined,
          tenantlessRouted: () => undefined,
          nameShortened: () => undefined,
          passRequestFailed: (t, error) => progress(`router: pass request failed for ${t}: ${String(error)}`),
        });
        const scheduler = new Scheduler([distributorFn], 1, async () => {
          invocations.scheduled++;
          return runInvocation(scheduledEvent(`${distributorFn.deployedName}-schedule`));
        });
        scheduler.start();
        return {
          invocations,
          route: router.route,
          async stop() {
            await scheduler.stop();
            await invokeServer.close();
            await Promise.all([router.close(), distributor.close()]);
          },
        };
      };

      /**
       * Router invocations of `size` records every `everyMs` (a tick is skipped while `maxRouterConcurrency` run),
       * tenants in turn; each message's id → invocation time.
       */
      const traffic = (route: ReturnType<typeof createRouterService>['route'], everyMs: number, size: number) => {
        const sent = new Map<string, number>();
        let next = 0;
        let routerInvocations = 0;
        const inFlight = new Set<Promise<unknown>>();
        const timer = setInterval(() => {
          // As the SQS event source with a maximum concurrency: the queue holds what the routers cannot take yet.
          if (inFlight.size >= maxRouterConcurrency) return;
          const bodies = Array.from({ length: size }, () => {
            const tenantId = tenants[next++ % tenants.length]!;
            const messageId = randomUUID();
            sent.set(messageId, Date.now());
            return JSON.stringify({
              target,
              tenantId,
              workflowName: 'flow',
              message: { body: '{"task":"bench"}', properties: { messageId, contentType: 'application/json' } },
            });
          });
          routerInvocations++;
          const call = route(sqsEvent(bodies, 'fairway-bench-after-process')).finally(() => inFlight.delete(call));
          inFlight.add(call);
        }, everyMs);
        return {
          sent,
          invocations: () => routerInvocations,
          async stop() {
            clearInterval(timer);
            await Promise.allSettled([...inFlight]);
          },
        };
      };

      const perMinute = (count: number, ms: number) => (count * 60_000) / ms;
      const costRows: Row[] = [];
      const cost = async (phase: string, ms: number, routed: number, pair: Awaited<ReturnType<typeof deploy>>) =>
        costRows.push({
          phase,
          seconds: Math.round(ms / 1000),
          'router invocations/min': perMinute(routed, ms),
          'distributor invocations/min, scheduled': perMinute(pair.invocations.scheduled, ms),
          'distributor invocations/min, on demand': perMinute(pair.invocations.requested, ms),
          'distributor busy s/min': perMinute(pair.invocations.busyMs / 1000, ms),
          'DynamoDB requests/min': perMinute((await dynamo.counts()).total, ms),
        });

      /** Light load: one document every 100 ms; latency = delivery to a worker (the target is empty) − router call. */
      const lightLoad = async (phase: string, onDemand: boolean, seconds: number) => {
        progress(`${phase}: ${seconds} s`);
        const pair = await deploy(onDemand);
        await dynamo.reset();
        const started = Date.now();
        const load = traffic(pair.route, 100, 1);
        await sleep(seconds * 1000);
        await load.stop();
        const elapsed = Date.now() - started;
        await cost(phase, elapsed, load.invocations(), pair);
        // Stragglers get a few seconds; a message still staged then counts with its wait so far (a lower bound).
        const deadline = Date.now() + 5_000;
        while (Date.now() < deadline && [...load.sent.keys()].some((id) => !workers.arrived.has(id))) await sleep(100);
        const end = Date.now();
        const waits = [...load.sent].map(([id, at]) => (workers.arrived.get(id) ?? end) - at);
        const censored = [...load.sent.keys()].filter((id) => !workers.arrived.has(id)).length;
        await pair.stop();
        await drainAll(model, [target, ...staging]);
        return { waits, censored };
      };

      const light = await lightLoad('light load, on demand', true, flags.light);
      const baseline = await lightLoad('light load, schedule only (baseline)', false, flags.baseline);

      progress(`heavy load: ${flags.heavy} s`);
      const backlog = Math.ceil((flags.workers * flags.heavy * 1.5) / tenants.length);
      await publishConfirmed(
        setup,
        (function* () {
          for (let i = 0; i < backlog; i++) {
            for (const queue of staging) {
              yield { queue, content: Buffer.from('{"task":"backlog"}'), options: { messageId: `backlog-${i}` } };
            }
          }
        })(),
      );
      const heavyPair = await deploy(true);
      const heavyLoad = traffic(heavyPair.route, 100, 10);
      // Steady state only: the window opens once the first pass (the schedule's, at deploy) has filled the target.
      const warmUpEnds = Date.now() + 10_000;
      const probe = await model.createChannel();
      while (Date.now() < warmUpEnds && (await probe.checkQueue(target)).messageCount < maxLength / 2) await sleep(50);
      await probe.close();
      await dynamo.reset();
      const invocationsBefore = { ...heavyPair.invocations };
      const routedBefore = heavyLoad.invocations();
      const consumedBefore = workers.acked;
      const heavyStart = Date.now();
      const samples = { total: 0, starved: 0, overfilled: 0 };
      const sampler = (async () => {
        const channel = await model.createChannel();
        while (Date.now() - heavyStart < flags.heavy * 1000) {
          const depth = (await channel.checkQueue(target)).messageCount;
          let staged = 0;
          for (const name of staging) staged += (await channel.checkQueue(name)).messageCount;
          samples.total++;
          if (depth === 0 && staged > 0) samples.starved++;
          if (depth > maxLength) samples.overfilled++;
          await sleep(100);
        }
        await channel.close();
      })();
      await sampler;
      const heavyMs = Date.now() - heavyStart;
      const consumed = workers.acked - consumedBefore;
      await heavyLoad.stop();
      for (const key of ['scheduled', 'requested', 'busyMs'] as const)
        heavyPair.invocations[key] -= invocationsBefore[key];
      await cost('heavy load, on demand', heavyMs, heavyLoad.invocations() - routedBefore, heavyPair);
      await heavyPair.stop();
      await drainAll(model, [target, ...staging]);

      progress(`idle: ${flags.idle} s`);
      const idlePair = await deploy(true);
      await dynamo.reset();
      const idleStart = Date.now();
      await sleep(flags.idle * 1000);
      await cost('idle, on demand', Date.now() - idleStart, 0, idlePair);
      await idlePair.stop();

      const throughput = (consumed * 1000) / heavyMs;
      const starvedShare = samples.total ? samples.starved / samples.total : 0;
      const goal = (name: string, measured: string, holds: boolean) => ({
        goal: name,
        measured,
        verdict: holds ? 'met' : 'NOT met',
      });
      const lp50 = quantile(light.waits, 0.5);
      const lp99 = quantile(light.waits, 0.99);
      const bp50 = quantile(baseline.waits, 0.5);
      const bp99 = quantile(baseline.waits, 0.99);
      const seconds = (ms: number, censored: number) => `${censored ? '≥ ' : ''}${(ms / 1000).toFixed(3)} s`;
      return [
        {
          title: `Issue 17 goals: ${flags.tenants} tenants, target x-max-length ${maxLength}, workers at ${flags.workers} msg/s, ~1 ms delay proxy`,
          rows: [
            goal('light load: p50 router invocation → in target ≤ 1 s', seconds(lp50, light.censored), lp50 <= 1_000),
            goal('light load: p99 router invocation → in target ≤ 5 s', seconds(lp99, light.censored), lp99 <= 5_000),
            goal(
              'heavy load: target empty while staging holds messages < 5 % of the time',
              `${(starvedShare * 100).toFixed(1)} % of ${samples.total} samples`,
              starvedShare < 0.05,
            ),
            goal(
              "heavy load: throughput ≥ 0.95 × the workers' rate",
              `${throughput.toFixed(1)} msg/s = ${(throughput / flags.workers).toFixed(3)} ×`,
              throughput >= 0.95 * flags.workers,
            ),
            goal(
              'no overfill: target above its x-max-length in no sample',
              `${samples.overfilled} samples`,
              samples.overfilled === 0,
            ),
          ],
          notes: [
            `Baseline, the same light load with passes on the schedule alone (${flags.baseline} s, rate from serverless.yml): ` +
              `p50 ${seconds(bp50, baseline.censored)}, p99 ${seconds(bp99, baseline.censored)} ` +
              `(${baseline.censored} of ${baseline.waits.length} messages still staged at the end, counted with their wait so far).`,
            `Light load: ${light.waits.length} documents, ${light.censored} not delivered within 5 s of the end. ` +
              'In target = delivered to a worker: the workers keep up, so the target is empty and delivery is immediate.',
            'Heavy load: the window opens once the first pass has filled the target (at most 10 s after the start); then ' +
              'every 100 ms the target ready count and the staging queues are read over AMQP; "empty" means 0 ready in ' +
              'the target while staging holds messages (workers may still hold up to their prefetch of 50).',
          ],
        },
        {
          title: 'Cost: invocations and DynamoDB requests per minute (the router counts its tenant counters too)',
          rows: costRows,
          notes: [
            '"busy s/min" is the distributor\'s Lambda time (an execution waits inside its invocation for a target due within DISTRIBUTOR_WAIT_BOUND_MS).',
          ],
        },
      ];
    } finally {
      for (const close of closers) await close().catch(() => undefined);
    }
  },
};

/** Workers at a set rate: prefetch 50, one ack every 1/rate s; each message's first delivery time by id. */
class Workers {
  readonly arrived = new Map<string, number>();
  acked = 0;
  private channel?: Channel;
  private nextSlot = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly model: ChannelModel,
    private readonly queue: string,
    private readonly rate: number,
  ) {}

  async start() {
    const channel = await this.model.createChannel();
    this.channel = channel;
    await channel.prefetch(50);
    await channel.consume(
      this.queue,
      (message) => {
        if (!message) return;
        const id = String(message.properties.messageId);
        if (!this.arrived.has(id)) this.arrived.set(id, Date.now());
        const now = performance.now();
        const at = Math.max(now, this.nextSlot);
        this.nextSlot = at + 1000 / this.rate;
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          channel.ack(message);
          this.acked++;
        }, at - now);
        this.timers.add(timer);
      },
      { consumerTag: 'bench-workers' },
    );
  }

  async stop() {
    for (const timer of this.timers) clearTimeout(timer);
    await this.channel?.close().catch(() => undefined);
  }
}

async function drainAll(model: ChannelModel, queues: readonly string[]) {
  const channel = await model.createChannel();
  for (const queue of queues) await channel.purgeQueue(queue);
  await channel.close();
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
