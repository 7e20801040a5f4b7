import type { ChannelModel } from 'amqplib';
import { stagingQueueName } from '../lib/staging/staging-names';
import { routerEventSource } from '../local/sqs/settings';
import { type Benchmark, textFlag } from './lib/benchmark';
import { asDeployedDistributorEnv, checkSettings, deploy, stackEnv } from './lib/fairway-deploy';
import {
  type Accounting,
  account,
  type DepthSample,
  depthSeries,
  idleWhileStaged,
  jainPerWindow,
  overfilled,
  quantile,
  ratePerSecond,
} from './lib/flood-metrics';
import { type BatchSettings, DepthReader, drainIds, RateWorkers, SqsBatches, sleep } from './lib/flood-traffic';
import { startDelayedServices } from './lib/hops';
import { plainDrainRate } from './lib/plain-drain';
import { type Goal, goalsTable, median, type Row, type Table } from './lib/report';
import { parseEnvFlag, parseListFlag } from './lib/text-flags';

type Flags =
  | 'flood'
  | 'noisy-tenants'
  | 'per-noisy'
  | 'quiet'
  | 'quiet-tenants'
  | 'quiet-rate'
  | 'quiet-workflows'
  | 'warm-queues'
  | 'workers'
  | 'slow-workers'
  | 'slow-flood'
  | 'rounds'
  | 'grace'
  | 'routers'
  | 'max-length'
  | 'window'
  | 'prefetch'
  | 'consumers';

export type DeliveryName = 'fifo' | 'priority' | 'on-demand' | 'schedule';
export type ScenarioName = 'flood' | 'five-noisy' | 'slow';
export type TargetType = 'classic-priority' | 'classic' | 'quorum';

/** The target's arguments per type (Fairway's deliveries add x-max-length). */
const targetArguments: Record<TargetType, Record<string, unknown>> = {
  'classic-priority': { 'x-max-priority': 10 },
  classic: {},
  quorum: { 'x-queue-type': 'quorum' },
};

const deliveryLabels: Record<DeliveryName, string> = {
  fifo: 'straight to the target, FIFO',
  priority: 'straight to the target, tenant priority only',
  'on-demand': 'Fairway, passes on demand',
  schedule: 'Fairway, schedule only',
};

/** Every level the router can give, mapped to one AMQP priority: the target delivers in arrival order. */
const samePriority = JSON.stringify(Object.fromEntries(Array.from({ length: 9 }, (_, i) => [String(i + 1), 5])));

interface Scenario {
  name: ScenarioName;
  noisy: number;
  perNoisy: number;
  workers: number;
}

interface RunResult {
  scenario: ScenarioName;
  targetType: TargetType;
  delivery: DeliveryName;
  round: number;
  ingress: Ingress;
  quiet: { p50: string; p99: string; max: string; p50Ms: number; p99Ms: number; count: number; censored: number };
  /** Quiet messages' wait in the after-process queue (sent → handed to a router), and sent → a worker starts them. */
  ingressWait: { p50Ms: number; p99Ms: number; fromSentP99Ms: number };
  /** Quiet messages' wait in the workers' own prefetch buffer (arrival → start): Fairway cannot shorten it. */
  heldWait: { p50Ms: number; p99Ms: number };
  noisyRatio: number;
  /** The baseline of noisyRatio: the same workers draining a plain queue of the target's type, msg/s. */
  workersRate: number;
  /** Jain's index per window after the first (five-noisy only). */
  jain: number[];
  idle: { share: number | undefined; samples: number };
  overfill: number | undefined;
  accounting: Accounting;
  series: string;
  passes: string;
  /** Records the router failed (or whose invocation threw), handed to it again. */
  routerRetries: number;
}

/**
 * Issue 25's headline: one noisy tenant floods a target while quiet tenants trickle, delivered four
 * ways side by side (straight to the target FIFO, straight with tenant priority, Fairway with passes
 * on demand, Fairway on the schedule alone), in rotating order; a five-noisy variant for fairness
 * among the noisy, and a slow-worker variant. Events reach the router in SQS-like batches from a
 * standard or a fair after-process queue; latency runs from the router's invocation to a worker
 * starting the message, the wait in the after-process queue (ingress) apart.
 */
export const floodBench: Benchmark<Flags> = {
  name: 'flood',
  summary: "quiet tenants' latency and the noisy tenants' throughput under a flood, Fairway against straight delivery",
  flags: {
    flood: { quick: 5_000, tiny: 60, full: 20_000, help: 'messages the noisy tenant floods (flood scenario)' },
    'noisy-tenants': { quick: 5, tiny: 2, full: 5, help: 'noisy tenants of the five-noisy scenario' },
    'per-noisy': { quick: 1_000, tiny: 30, full: 5_000, help: 'messages each of them floods' },
    quiet: { quick: 20, tiny: 2, full: 90, help: 'seconds the quiet tenants send (the measured phase)' },
    'quiet-tenants': { quick: 3, tiny: 2, full: 3, help: 'quiet tenants' },
    'quiet-rate': { quick: 2, tiny: 2, full: 2, help: 'messages per second each quiet tenant sends' },
    'quiet-workflows': {
      quick: 1,
      tiny: 1,
      full: 1,
      help: "workflows each quiet tenant's messages take in turn (a tenant spread over many: quiet is the tenant's backlog)",
    },
    'warm-queues': {
      quick: 0,
      tiny: 0,
      full: 0,
      help: "1: each quiet staging queue gets one unmeasured message before the flood (tenants already at work: a new queue's first message waits for the distributor's next round)",
    },
    workers: { quick: 200, tiny: 200, full: 200, help: "the workers' rate, messages per second" },
    'slow-workers': { quick: 10, tiny: 10, full: 10, help: "the slow-worker scenario's workers, messages per second" },
    'slow-flood': { quick: 400, tiny: 20, full: 1_000, help: 'messages the noisy tenant floods (slow scenario)' },
    rounds: { quick: 1, tiny: 1, full: 2, help: 'rounds; the order of the deliveries rotates each round' },
    grace: { quick: 8, tiny: 2, full: 15, help: 'seconds after the quiet phase for quiet stragglers' },
    routers: { quick: 4, tiny: 2, full: 4, help: 'router invocations at once at most (the event source concurrency)' },
    'max-length': { quick: 1_000, tiny: 1_000, full: 1_000, help: "Fairway's target x-max-length" },
    window: { quick: 10, tiny: 1, full: 10, help: "seconds per window of the noisy tenants' Jain index" },
    prefetch: {
      quick: 2,
      tiny: 2,
      full: 2,
      help: "each worker consumer's prefetch (Worker Framework's default for a one-thread worker: threads + CAF_RABBITMQ_PREFETCH_BUFFER 1)",
    },
    consumers: {
      quick: 4,
      tiny: 4,
      full: 4,
      help: 'worker consumers sharing the rate (one-thread workers: one message at a time each)',
    },
  },
  textFlags: {
    'distributor-env': 'JSON object of distributor settings for the Fairway deliveries, e.g. {"DISTRIBUTOR_X":"1"}',
    'router-env': "JSON object of router settings for the Fairway deliveries (on top of the bench's)",
    scenarios: 'comma-separated subset of flood,five-noisy,slow (default all)',
    deliveries: 'comma-separated subset of fifo,priority,on-demand,schedule (default all)',
    'target-types': 'comma-separated subset of classic-priority,classic,quorum (default classic-priority)',
    ingress:
      'comma-separated subset of fifo,fair: the after-process queue standard (FIFO across tenants) or fair (by message group in turn); default fifo',
  },
  run: (flags, progress) =>
    runFlood(
      flags,
      {
        distributorEnv: envFlag('distributor-env'),
        routerEnv: envFlag('router-env'),
        scenarios: listFlag('scenarios', ['flood', 'five-noisy', 'slow'] as const),
        deliveries: listFlag('deliveries', ['fifo', 'priority', 'on-demand', 'schedule'] as const),
        targetTypes: textFlag('target-types')
          ? listFlag('target-types', ['classic-priority', 'classic', 'quorum'] as const)
          : ['classic-priority'],
        ingress: textFlag('ingress') ? listFlag('ingress', ['fifo', 'fair'] as const) : ['fifo'],
      },
      progress,
    ),
};

export interface FloodOptions {
  distributorEnv: Record<string, string>;
  routerEnv: Record<string, string>;
  scenarios: readonly ScenarioName[];
  deliveries: readonly DeliveryName[];
  targetTypes: readonly TargetType[];
  ingress: readonly Ingress[];
}

type Ingress = 'fifo' | 'fair';

const envFlag = (name: string) => parseEnvFlag(name, textFlag(name));
const listFlag = <T extends string>(name: string, known: readonly T[]) => parseListFlag(name, textFlag(name), known);

export async function runFlood(
  flags: Record<Flags, number>,
  options: FloodOptions,
  progress: (line: string) => void,
): Promise<Table[]> {
  const scenarios: Scenario[] = options.scenarios.map((name) =>
    name === 'flood'
      ? { name, noisy: 1, perNoisy: flags.flood, workers: flags.workers }
      : name === 'five-noisy'
        ? { name, noisy: flags['noisy-tenants'], perNoisy: flags['per-noisy'], workers: flags.workers }
        : { name, noisy: 1, perNoisy: flags['slow-flood'], workers: flags['slow-workers'] },
  );
  const source = routerEventSource();
  const batches = {
    batchSize: source.batchSize,
    windowMs: source.maximumBatchingWindowSeconds * 1000,
    concurrency: flags.routers,
  };

  const closers: (() => Promise<unknown>)[] = [];
  try {
    const { dynamo, delayed, model } = await startDelayedServices('flood', 1, closers);
    // A dropped connection ends the run with its error (the next call on it fails), not the process.
    model.on('error', (error) => progress(`bench connection: ${String(error)}`));
    const baseEnv = stackEnv(delayed, dynamo);

    checkSettings({
      env: baseEnv,
      routerEnv: options.routerEnv,
      distributor: { env: options.distributorEnv, routers: flags.routers },
    });
    const context: RunContext = { model, baseEnv, flags, options, batches, progress };

    const results: RunResult[] = [];
    let runIndex = 0;
    for (const scenario of scenarios)
      for (const targetType of options.targetTypes) {
        const shape = { consumers: flags.consumers, prefetch: flags.prefetch };
        const plain = `flood-plain-${scenario.name}-${targetType}`;
        const workersRate = await plainDrainRate(model, plain, targetArguments[targetType], scenario.workers, shape);
        progress(
          `${scenario.name}, ${targetType}: the workers alone drain a plain queue at ${workersRate.toFixed(1)} msg/s (nominal ${scenario.workers})`,
        );
        for (const ingress of options.ingress)
          for (let round = 0; round < flags.rounds; round++) {
            const start = round % options.deliveries.length;
            const order = [...options.deliveries.slice(start), ...options.deliveries.slice(0, start)];
            for (const delivery of order) {
              progress(`${scenario.name}, ${targetType}, ${ingress} ingress, round ${round + 1}: ${delivery}`);
              const how = { delivery, targetType, ingress, workersRate };
              const result = await runOnce(context, scenario, how, round, runIndex++);
              results.push(result);
              progress(
                `  quiet p50 ${result.quiet.p50} p99 ${result.quiet.p99} (in the workers' prefetch ${inSeconds(result.heldWait.p50Ms)} / ${inSeconds(result.heldWait.p99Ms)}), ingress p99 ${(result.ingressWait.p99Ms / 1000).toFixed(3)} s, noisy ${result.noisyRatio.toFixed(3)} ×, ` +
                  `idle ${result.idle.share === undefined ? '–' : (result.idle.share * 100).toFixed(1)} %, ` +
                  `overfill ${result.overfill ?? '–'}, lost ${result.accounting.lost}, ` +
                  `duplicates ${result.accounting.duplicates}`,
              );
            }
          }
      }
    return report(results, scenarios, flags, batches, options);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

interface RunContext {
  model: ChannelModel;
  baseEnv: Record<string, string>;
  flags: Record<Flags, number>;
  options: FloodOptions;
  batches: BatchSettings;
  progress: (line: string) => void;
}

/** One delivery of one scenario: a target of its own, the deployment, the traffic, and what it measured. */
async function runOnce(
  { model, baseEnv, flags, options, batches, progress }: RunContext,
  scenario: Scenario,
  {
    delivery,
    targetType,
    ingress,
    workersRate,
  }: { delivery: DeliveryName; targetType: TargetType; ingress: Ingress; workersRate: number },
  round: number,
  run: number,
): Promise<RunResult> {
  const fairway = delivery === 'on-demand' || delivery === 'schedule';
  const target = `flood-target-${run}`;
  const noisy = Array.from({ length: scenario.noisy }, (_, i) => `r${run}-noisy${i}`);
  const quiet = Array.from({ length: flags['quiet-tenants'] }, (_, i) => `r${run}-quiet${i}`);
  const quietWorkflows = Array.from({ length: flags['quiet-workflows'] }, (_, i) => (i === 0 ? 'flow' : `flow${i}`));
  const staging = [
    ...noisy.map((tenantId) => stagingQueueName({ target, tenantId, workflowName: 'flow' })),
    ...quiet.flatMap((tenantId) =>
      quietWorkflows.map((workflowName) => stagingQueueName({ target, tenantId, workflowName })),
    ),
  ];
  const setup = await model.createChannel();
  await setup.assertQueue(target, {
    durable: true,
    arguments: { ...targetArguments[targetType], ...(fairway ? { 'x-max-length': flags['max-length'] } : {}) },
  });
  await setup.close();

  const deployment = await deploy({
    env: baseEnv,
    routerEnv: fairway
      ? options.routerEnv
      : {
          ROUTER_TARGETS: JSON.stringify({ [target]: { bypassStaging: true } }),
          ...(delivery === 'fifo' ? { TENANT_PRIORITY_AMQP_PRIORITIES: samePriority } : {}),
        },
    ...(fairway
      ? { distributor: { onDemand: delivery === 'on-demand', env: options.distributorEnv, routers: flags.routers } }
      : {}),
    progress,
  });
  const sqs = new SqsBatches(deployment.route, { ...batches, ingress }, (error) =>
    progress(`router threw: ${String(error)}`),
  );
  const event = (tenantId: string, messageId: string, workflowName = 'flow') =>
    JSON.stringify({
      target,
      tenantId,
      workflowName,
      message: { body: '{"task":"bench"}', properties: { messageId, contentType: 'application/json' } },
    });
  sqs.start();
  if (flags['warm-queues'] > 0) {
    const warm = quiet.flatMap((tenant) => quietWorkflows.map((workflow) => ({ tenant, workflow })));
    for (const { tenant, workflow } of warm)
      sqs.send(`${tenant}#warm-${workflow}`, event(tenant, `${tenant}#warm-${workflow}`, workflow));
    await warmedUp(model, target, warm.length);
  }
  const t0 = Date.now();
  const workers = new RateWorkers(model, target, scenario.workers, t0, {
    consumers: flags.consumers,
    prefetch: flags.prefetch,
  });
  await workers.start();
  const sentAt = new Map<string, number>();
  const send = (tenantId: string, n: number, workflowName = 'flow') => {
    const messageId = `${tenantId}#${n}`;
    sentAt.set(messageId, Date.now());
    sqs.send(messageId, event(tenantId, messageId, workflowName));
  };

  // The floods, one tenant's after another's (as floods that start a moment apart), then the quiet trickle.
  for (const tenant of noisy) for (let n = 0; n < scenario.perNoisy; n++) send(tenant, n);
  const quietMs = flags.quiet * 1000;
  const everyMs = 1000 / flags['quiet-rate'];
  const quietIds: string[] = [];
  const senders = quiet.map((tenant, i) => {
    let n = 0;
    const tick = () => {
      if (Date.now() - t0 >= quietMs) return;
      send(tenant, n, quietWorkflows[n % quietWorkflows.length]);
      quietIds.push(`${tenant}#${n++}`);
    };
    const timers: { start?: NodeJS.Timeout; every?: NodeJS.Timeout } = {};
    timers.start = setTimeout(
      () => {
        tick();
        timers.every = setInterval(tick, everyMs);
      },
      (i * everyMs) / quiet.length,
    );
    return timers;
  });

  const samples: DepthSample[] = [];
  const reader = new DepthReader(model);
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now() - t0;
      const held = workers.held();
      const depth = await reader.depth(target);
      let staged = 0;
      if (fairway) for (const name of staging) staged += await reader.depth(name);
      samples.push({ at, depth, staged, held });
      await sleep(200);
    }
  })();

  await sleep(quietMs);
  for (const timers of senders) {
    clearTimeout(timers.start);
    clearInterval(timers.every);
  }
  const graceEnds = Date.now() + flags.grace * 1000;
  while (Date.now() < graceEnds && quietIds.some((id) => !workers.firstStart.has(id))) await sleep(100);
  const end = Date.now();
  sampling = false;
  await sampler;
  await reader.close();
  await sqs.stop();
  await deployment.stop();
  await workers.stop();
  const queued = [...sqs.waiting(), ...(await drainIds(model, [target, ...staging]))];

  // Latency: router invocation → a worker starts the message; a quiet message never delivered counts with its wait so far.
  const waits = quietIds.map((id) => (workers.firstStart.get(id) ?? end) - (sqs.handedAt.get(id) ?? sentAt.get(id)!));
  const censoredWaits = quietIds
    .filter((id) => !workers.firstStart.has(id))
    .map((id) => end - (sqs.handedAt.get(id) ?? sentAt.get(id)!));
  const lowestCensored = Math.min(...censoredWaits);
  const seconds = (ms: number) => `${ms >= lowestCensored ? '≥ ' : ''}${(ms / 1000).toFixed(3)} s`;
  const p50 = quantile(waits, 0.5);
  const p99 = quantile(waits, 0.99);
  // Apart: the wait in the after-process queue before a router is handed the event, and the whole from the send.
  const ingressWaits = quietIds.map((id) => (sqs.handedAt.get(id) ?? end) - sentAt.get(id)!);
  const fromSent = quietIds.map((id) => (workers.firstStart.get(id) ?? end) - sentAt.get(id)!);
  const heldWaits = quietIds.flatMap((id) => {
    const arrived = workers.firstArrival.get(id);
    return arrived === undefined ? [] : [workers.firstStart.get(id)! - arrived];
  });

  // A noisy tenant is backlogged until its last message is delivered; together, until the last of them is.
  const doneAt = new Map(
    noisy.map((tenant) => {
      let last = 0;
      for (let n = 0; n < scenario.perNoisy; n++) {
        const at = workers.firstStart.get(`${tenant}#${n}`);
        if (at === undefined) return [tenant, Number.POSITIVE_INFINITY];
        last = Math.max(last, at - t0);
      }
      return [tenant, last];
    }),
  );
  const backloggedUntil = Math.min(quietMs, Math.max(...doneAt.values()));
  const warmUp = Math.min(5_000, quietMs / 4);
  const noisyRate = ratePerSecond(workers.acks, new Set(noisy), warmUp, backloggedUntil);
  const windowMs = flags.window * 1000;
  const jain = noisy.length > 1 ? jainPerWindow(workers.acks, doneAt, windowMs, windowMs, quietMs) : [];
  const { invocations } = deployment;
  return {
    scenario: scenario.name,
    targetType,
    delivery,
    ingress,
    round: round + 1,
    quiet: {
      p50: seconds(p50),
      p99: seconds(p99),
      max: seconds(Math.max(0, ...waits)),
      p50Ms: p50,
      p99Ms: p99,
      count: quietIds.length,
      censored: censoredWaits.length,
    },
    ingressWait: {
      p50Ms: quantile(ingressWaits, 0.5),
      p99Ms: quantile(ingressWaits, 0.99),
      fromSentP99Ms: quantile(fromSent, 0.99),
    },
    heldWait: { p50Ms: quantile(heldWaits, 0.5), p99Ms: quantile(heldWaits, 0.99) },
    noisyRatio: noisyRate / workersRate,
    workersRate,
    jain,
    idle: idleWhileStaged(samples),
    overfill: fairway ? overfilled(samples, flags['max-length']) : undefined,
    accounting: account(sentAt.keys(), workers.deliveries, queued),
    series: depthSeries(samples, 5_000),
    passes: fairway ? `${invocations.scheduled} / ${invocations.requested}` : '–',
    routerRetries: sqs.retried,
  };
}

const inSeconds = (ms: number) => `${(ms / 1000).toFixed(3)} s`;

function report(
  results: RunResult[],
  scenarios: Scenario[],
  flags: Record<Flags, number>,
  batches: BatchSettings,
  options: FloodOptions,
): Table[] {
  const percent = (share: number | undefined) => (share === undefined ? '–' : `${(share * 100).toFixed(1)} %`);
  const rows: Row[] = results.map((r) => ({
    scenario: r.scenario,
    target: r.targetType,
    ingress: r.ingress,
    delivery: deliveryLabels[r.delivery],
    round: r.round,
    'quiet msgs': r.quiet.count,
    'quiet p50': r.quiet.p50,
    'quiet p99': r.quiet.p99,
    'quiet max': r.quiet.max,
    'quiet ingress wait p50': inSeconds(r.ingressWait.p50Ms),
    'quiet ingress wait p99': inSeconds(r.ingressWait.p99Ms),
    'quiet p99 from sent': inSeconds(r.ingressWait.fromSentP99Ms),
    "quiet p50 / p99 in the workers' prefetch": `${inSeconds(r.heldWait.p50Ms)} / ${inSeconds(r.heldWait.p99Ms)}`,
    'noisy ÷ workers': r.noisyRatio,
    'workers alone, msg/s': Number(r.workersRate.toFixed(1)),
    'Jain min (windows after 1st)': r.jain.length ? Math.min(...r.jain) : '–',
    'target idle while staged': percent(r.idle.share),
    'overfill samples': r.overfill ?? '–',
    sent: r.accounting.sent,
    lost: r.accounting.lost,
    duplicates: r.accounting.duplicates,
    'still queued': r.accounting.waiting,
    'passes sched / on demand': r.passes,
    'router retries': r.routerRetries,
  }));

  const summary: Row[] = [];
  for (const scenario of scenarios)
    for (const targetType of options.targetTypes)
      for (const ingress of options.ingress)
        for (const delivery of options.deliveries) {
          const of = results.filter(
            (r) =>
              r.scenario === scenario.name &&
              r.targetType === targetType &&
              r.ingress === ingress &&
              r.delivery === delivery,
          );
          if (of.length === 0) continue;
          const lower = of.some((r) => r.quiet.censored > 0) ? '≥ ' : '';
          summary.push({
            scenario: scenario.name,
            target: targetType,
            ingress,
            delivery: deliveryLabels[delivery],
            'quiet p50 (median of rounds)': `${lower}${(median(of.map((r) => r.quiet.p50Ms)) / 1000).toFixed(2)} s`,
            'quiet p99 (median of rounds)': `${lower}${(median(of.map((r) => r.quiet.p99Ms)) / 1000).toFixed(2)} s`,
            'quiet ingress wait p99 (median)': inSeconds(median(of.map((r) => r.ingressWait.p99Ms))),
            'quiet p99 from sent (median)': inSeconds(median(of.map((r) => r.ingressWait.fromSentP99Ms))),
            'noisy ÷ workers (median)': median(of.map((r) => r.noisyRatio)),
          });
        }

  const onDemand = (scenario: ScenarioName) =>
    results.filter((r) => r.delivery === 'on-demand' && r.scenario === scenario);
  const goals: Goal[] = [];
  const worst = (values: number[]) => Math.max(...values);
  const flood = onDemand('flood');
  if (flood.length) {
    const p50 = worst(flood.map((r) => r.quiet.p50Ms));
    const p99 = worst(flood.map((r) => r.quiet.p99Ms));
    const noisy = Math.min(...flood.map((r) => r.noisyRatio));
    goals.push(
      {
        goal: 'flood: quiet p50, router invocation → a worker starts it',
        target: '≤ 0.3 s',
        measured: `${(p50 / 1000).toFixed(3)} s (worst round)`,
        met: p50 <= 300 && flood.every((r) => r.quiet.censored === 0),
      },
      {
        goal: 'flood: quiet p99',
        target: '≤ 1 s',
        measured: `${(p99 / 1000).toFixed(3)} s (worst round)`,
        met: p99 <= 1_000 && flood.every((r) => r.quiet.censored === 0),
      },
      {
        goal: "flood: noisy tenant's throughput ÷ the same workers' on a plain queue",
        target: '≥ 0.95',
        measured: `${noisy.toFixed(3)} (worst round)`,
        met: noisy >= 0.95,
      },
      // Apart from the rest: the after-process queue's share of a quiet message's wait, per kind of queue.
      ...options.ingress.map((ingress): Goal => {
        const of = flood.filter((r) => r.ingress === ingress);
        const wait = worst(of.map((r) => r.ingressWait.p99Ms));
        const total = worst(of.map((r) => r.ingressWait.fromSentP99Ms));
        return {
          goal: `flood: quiet ingress wait p99, sent → router invocation (${ingress} after-process queue)`,
          target: '–',
          measured: `${inSeconds(wait)}; sent → a worker starts it: ${inSeconds(total)} (worst round)`,
          met: true,
          reported: true,
        };
      }),
    );
  }
  const slow = onDemand('slow');
  if (slow.length) {
    const p99 = worst(slow.map((r) => r.quiet.p99Ms));
    // What the workers hold delivered, unstarted, before a new message: Fairway cannot shorten that wait.
    const heldMs = (1000 * flags.consumers * flags.prefetch) / flags['slow-workers'];
    const bound =
      heldMs > 2_000 ? `; out of reach by construction: the workers' prefetch holds ${inSeconds(heldMs)}` : '';
    goals.push({
      goal: `slow workers (${flags['slow-workers']} msg/s): quiet p99`,
      target: '≤ 2 s',
      measured: `${(p99 / 1000).toFixed(3)} s (worst round)${bound}`,
      met: p99 <= 2_000 && slow.every((r) => r.quiet.censored === 0),
    });
  }
  const five = onDemand('five-noisy');
  if (five.length) {
    const indices = five.flatMap((r) => r.jain);
    const lowest = indices.length ? Math.min(...indices) : Number.NaN;
    goals.push({
      goal: `${flags['noisy-tenants']} noisy tenants: Jain's index in every ${flags.window} s window after the first`,
      target: '≥ 0.99',
      measured: indices.length
        ? `lowest ${lowest.toFixed(4)} of ${indices.length} windows`
        : 'no window (phase too short)',
      met: indices.length > 0 && lowest >= 0.99,
    });
  }
  const fairwayRuns = results.filter((r) => r.delivery === 'on-demand');
  if (fairwayRuns.length) {
    const overfill = fairwayRuns.reduce((n, r) => n + (r.overfill ?? 0), 0);
    const lost = fairwayRuns.reduce((n, r) => n + r.accounting.lost, 0);
    const duplicates = fairwayRuns.reduce((n, r) => n + r.accounting.duplicates, 0);
    const sent = fairwayRuns.reduce((n, r) => n + r.accounting.sent, 0);
    const idle = fairwayRuns.flatMap((r) => (r.idle.share === undefined ? [] : [r.idle.share]));
    const idleWorst = idle.length ? Math.max(...idle) : 0;
    goals.push(
      {
        goal: 'on demand, every scenario: no overfill (target above its x-max-length)',
        target: '0 samples',
        measured: `${overfill} samples`,
        met: overfill === 0,
      },
      {
        goal: 'on demand, every scenario: nothing lost',
        target: '0 lost',
        measured: `${lost} lost, ${duplicates} duplicates of ${sent} sent`,
        met: lost === 0,
      },
      {
        goal: 'on demand, every scenario: target idle while staging holds work',
        target: '< 2 % of samples',
        measured: `${(idleWorst * 100).toFixed(1)} % (worst run)`,
        met: idleWorst < 0.02,
      },
    );
  }

  const env = (name: string, value: Record<string, string>) =>
    Object.keys(value).length ? ` ${name} ${JSON.stringify(value)}.` : '';
  return [
    {
      title: `Flood: quiet latency and noisy throughput per delivery (${flags.rounds} round(s), order rotating)`,
      rows: summary,
      notes: [
        `Scenarios: flood = 1 noisy tenant × ${flags.flood}; five-noisy = ${flags['noisy-tenants']} × ${flags['per-noisy']} ` +
          `(workers ${flags.workers} msg/s); slow = 1 × ${flags['slow-flood']} with workers at ${flags['slow-workers']} msg/s. ` +
          `In each, ${flags['quiet-tenants']} quiet tenants send ${flags['quiet-rate']} msg/s each ` +
          `(over ${flags['quiet-workflows']} workflow(s) each, in turn) for ${flags.quiet} s, then up to ` +
          `${flags.grace} s for stragglers. One target per type (${options.targetTypes.join(', ')}: classic-priority has ` +
          `x-max-priority 10; Fairway's with x-max-length ${flags['max-length']}); workers: ${flags.consumers} consumer(s), ` +
          `prefetch ${flags.prefetch} each.`,
        'Events reach the router from one in-memory after-process queue (fifo: in order across tenants, as a standard ' +
          "queue; fair: each batch from the tenants' message groups in turn, the most an SQS fair queue could do), " +
          `in batches of up to ${batches.batchSize} gathered for at ` +
          `most ${batches.windowMs} ms (serverless.yml), ${batches.concurrency} router invocations at once; AMQP, the ` +
          'management API and DynamoDB behind a ~1 ms delay proxy. Latency: router invocation → a worker starts the message (not its arrival in the prefetch buffer); ' +
          'the ingress wait (sent → router invocation) is apart, and "from sent" is the two together; ' +
          '"≥" marks a figure that includes quiet messages not delivered by the end, counted with their wait so far. ' +
          'Both Fairway deliveries run the distributor schedule of serverless.yml (every minute, the first pass at deploy, ' +
          'before the flood): a phase shorter than a minute gives "schedule only" no pass that moves anything.' +
          env(
            'Distributor settings:',
            asDeployedDistributorEnv({ env: options.distributorEnv, routers: flags.routers }),
          ) +
          env('Router settings:', options.routerEnv),
      ],
    },
    {
      title: 'Flood: every run',
      rows,
      notes: [
        "noisy ÷ workers: the noisy tenants' acks per second from the warm-up (5 s) until the quiet phase ends (or the " +
          "noisy tenants run out), ÷ the same workers' rate draining a plain queue of the target's type, kept full, " +
          'measured before each scenario and type (workers alone, msg/s; at prefetch 1 a consumer waits a round trip ' +
          "per message and stays under the nominal rate). Jain: the noisy tenants' acks per window of the quiet phase, windows " +
          "after the first, among the noisy tenants still backlogged at the window's end (at least two). Target idle while " +
          'staged: of the samples (every 200 ms) with work in staging, those with 0 ready in the target and none in the ' +
          "workers' hands. Overfill: samples above x-max-length (the default overflow drops the head, which shows as lost). " +
          'Lost: sent and found neither started by a worker nor in any queue at the end; duplicates: copies beyond the ' +
          'first, started or queued (each one more time a worker would process the message). Stopping, the workers ' +
          'finish what they started and put back what they hold unstarted: found queued, that is waiting, not a ' +
          'duplicate. Router retries: records the router failed (a confirm timeout under load, say) and was ' +
          'handed again.',
        ...results.map(
          (r) => `Target depth, largest per 5 s, ${r.scenario} / ${r.delivery} / round ${r.round}: ${r.series}`,
        ),
      ],
    },
    goalsTable('flood', goals),
  ];
}

/** Waits until the warm-up's messages reached the target (their staging queues exist and were served), then purges them: they are not measured. */
async function warmedUp(model: ChannelModel, target: string, count: number): Promise<void> {
  const reader = new DepthReader(model);
  const deadline = Date.now() + 60_000;
  while ((await reader.depth(target)) < count) {
    if (Date.now() > deadline) throw new Error(`warm-up: ${count} messages did not reach ${target} within 60 s`);
    await sleep(50);
  }
  const channel = await model.createChannel();
  await channel.purgeQueue(target);
  await channel.close();
}
