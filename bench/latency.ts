import { randomUUID } from 'node:crypto';
import type { ChannelModel } from 'amqplib';
import { stagingQueueName } from '../lib/staging/staging-names';
import { memoryStagingRegistry } from '../test/harness/staging-registry';
import type { Benchmark } from './lib/benchmark';
import { asDeployedDistributorEnv, type Deployment, deploy, stackEnv } from './lib/fairway-deploy';
import { TargetWorkers } from './lib/fleet-workers';
import { quantile } from './lib/flood-metrics';
import { DepthReader, SqsBatches, sleep } from './lib/flood-traffic';
import { startDelayedServices } from './lib/hops';
import type { Row } from './lib/report';

type Flags = 'light' | 'baseline' | 'heavy' | 'idle' | 'workers' | 'tenants';

const target = 'worker-input';
const maxLength = 1_000;
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
    const closers: (() => Promise<unknown>)[] = [];
    try {
      // dynalite in a process of its own, counting requests; it and the broker behind ~1 ms proxies.
      const { dynamo, delayed, model } = await startDelayedServices('latency', 1, closers);
      const setup = await model.createConfirmChannel();
      await setup.assertQueue(target, {
        durable: true,
        arguments: { 'x-max-length': maxLength, 'x-max-priority': 9 },
      });
      const tenants = Array.from({ length: flags.tenants }, (_, i) => `tenant${i}`);
      const staging = tenants.map((tenantId) => stagingQueueName({ target, tenantId, workflowName: 'flow' }));
      for (const name of staging) await setup.assertQueue(name, { durable: true });

      const baseEnv = stackEnv(delayed, dynamo);
      // In memory, as in the runs recorded in BENCHMARKS.md: the router here records nothing in it,
      // so the schedule's backstop listing (at deploy) records the staging queues.
      const registry = memoryStagingRegistry();
      const workers = new TargetWorkers(model, target, flags.workers);
      await workers.start();
      closers.unshift(() => workers.stop());

      /** The deployed pair for one phase: on demand (async invokes through the local endpoint) or schedule only. */
      const deployPair = (onDemand: boolean) =>
        deploy({
          env: baseEnv,
          routerEnv: {},
          distributor: { onDemand, env: {}, routers: maxRouterConcurrency, registry },
          progress,
        });

      /** The after-process queue's event source: batches of `size` to at most `maxRouterConcurrency` routers at once. */
      const afterProcessQueue = (route: Deployment['route'], size: number) =>
        new SqsBatches(route, { batchSize: size, windowMs: 0, concurrency: maxRouterConcurrency }, (error) =>
          progress(`router threw: ${String(error)}`),
        );

      /**
       * Router invocations of `size` records every `everyMs` through the after-process queue's event source
       * (at most `maxRouterConcurrency` at once), tenants in turn; each message's id → the time a router was
       * handed it.
       */
      const traffic = (route: Deployment['route'], everyMs: number, size: number) => {
        const sqs = afterProcessQueue(route, size);
        let next = 0;
        const timer = setInterval(() => {
          for (let i = 0; i < size; i++) {
            const tenantId = tenants[next++ % tenants.length]!;
            // Unique over the phases: the workers keep each id's first delivery.
            const messageId = randomUUID();
            const message = { body: '{"task":"bench"}', properties: { messageId, contentType: 'application/json' } };
            sqs.send(messageId, JSON.stringify({ target, tenantId, workflowName: 'flow', message }));
          }
        }, everyMs);
        sqs.start();
        return {
          sent: sqs.handedAt,
          invocations: () => sqs.invocations,
          async stop() {
            clearInterval(timer);
            await sqs.stop();
          },
        };
      };

      const perMinute = (count: number, ms: number) => (count * 60_000) / ms;
      const costRows: Row[] = [];
      const cost = async (phase: string, ms: number, routed: number, pair: Deployment) =>
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
        const pair = await deployPair(onDemand);
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
      const heavyPair = await deployPair(true);
      // The backlog comes through the routers, as every staged message does when deployed: a router
      // that stages asks for a pass. Published behind their back, it waited for the backstop while
      // a target granted at light load took the routers' messages direct.
      const seeding = afterProcessQueue(heavyPair.route, 10);
      for (let i = 0; i < backlog; i++)
        for (const tenantId of tenants) {
          const message = { body: '{"task":"backlog"}', properties: { messageId: `backlog-${tenantId}-${i}` } };
          seeding.send(
            message.properties.messageId,
            JSON.stringify({ target, tenantId, workflowName: 'flow', message }),
          );
        }
      seeding.start();
      while (seeding.waiting().length > 0) await sleep(100);
      await seeding.stop();
      const heavyLoad = traffic(heavyPair.route, 100, 10);
      // Steady state only: the window opens once the first pass (the schedule's, at deploy) has filled the target.
      const warmUpEnds = Date.now() + 10_000;
      const reader = new DepthReader(model);
      while (Date.now() < warmUpEnds && (await reader.depth(target)) < maxLength / 2) await sleep(50);
      await dynamo.reset();
      const invocationsBefore = { ...heavyPair.invocations };
      const routedBefore = heavyLoad.invocations();
      const consumedBefore = workers.acked;
      const heavyStart = Date.now();
      const samples = { total: 0, starved: 0, overfilled: 0 };
      while (Date.now() - heavyStart < flags.heavy * 1000) {
        const depth = await reader.depth(target);
        let staged = 0;
        for (const name of staging) staged += await reader.depth(name);
        samples.total++;
        if (depth === 0 && staged > 0) samples.starved++;
        if (depth > maxLength) samples.overfilled++;
        await sleep(100);
      }
      await reader.close();
      const heavyMs = Date.now() - heavyStart;
      const consumed = workers.acked - consumedBefore;
      await heavyLoad.stop();
      for (const key of ['scheduled', 'requested', 'busyMs'] as const)
        heavyPair.invocations[key] -= invocationsBefore[key];
      await cost('heavy load, on demand', heavyMs, heavyLoad.invocations() - routedBefore, heavyPair);
      await heavyPair.stop();
      await drainAll(model, [target, ...staging]);

      progress(`idle: ${flags.idle} s`);
      const idlePair = await deployPair(true);
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
            '"busy s/min" is the distributor\'s Lambda time (an execution waits inside its invocation for a target due within its wait bound, 6 s).',
            `The distributor runs with DIRECT_ROUTING ${asDeployedDistributorEnv({ env: {}, routers: maxRouterConcurrency }).DIRECT_ROUTING} ` +
              `(serverless.yml's, with the bench's ${maxRouterConcurrency} router invocations at once for the router's reserved concurrency).`,
          ],
        },
      ];
    } finally {
      for (const close of closers) await close().catch(() => undefined);
    }
  },
};

async function drainAll(model: ChannelModel, queues: readonly string[]) {
  const channel = await model.createChannel();
  for (const queue of queues) await channel.purgeQueue(queue);
  await channel.close();
}
