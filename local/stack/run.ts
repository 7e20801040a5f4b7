import { AsyncLocalStorage } from 'node:async_hooks';
import { createWriteStream, writeFileSync } from 'node:fs';
import { connect } from 'amqplib';
import { createCleanupOperator } from '../../lib/cleanup/operator';
import type { ExecutionSummary } from '../../lib/distributor/report';
import { ManagementClient } from '../../lib/rabbitmq/management';
import { startDynamo } from '../embedded-dynamo';
import { loadHandler } from '../functions';
import { lambdaContext, scheduledEvent } from '../lambda-events';
import { startLambdaInvokeServer } from '../lambda-invoke-server';
import { loadQueueSettings } from '../ops/queues';
import { loadTenantSettings } from '../ops/tenants';
import { type ServiceFunction, serviceFunctions } from '../service';
import { startLocalAfterProcessQueue } from '../sqs/local-queue';
import { DemoRegistry } from './demo-registry';
import { createDemoVhost } from './demo-vhost';
import { QueueDepths } from './depths';
import { functionEnvironment, operatorEnv } from './environment';
import { runHeadless } from './headless';
import { PassTap, RateWindow } from './passes';
import { Scheduler } from './scheduler';
import { type Snapshot, takeSnapshot } from './snapshot';
import { demoTenants, TrafficGenerator } from './traffic';
import { Trends } from './trends';
import { ansi, recordTrends, renderView, type ViewState } from './view';
import { SimulatedWorker } from './worker';

export interface LocalStackOptions {
  speed: number;
  headless: boolean;
  /** Seconds; headless runs stop earlier once the end states hold. */
  duration?: number;
  stage: string;
  logFile: string;
  /** Where `--headless` writes its final state (JSON), whatever else is on stdout (npm's banner). */
  resultFile: string;
  amqpUrl: string;
  managementUrl: string;
}

export type { HeadlessResult } from './headless';

const target = 'worker-input';
/** The window of the view's rates (real ms). */
const RATE_WINDOW_MS = 30_000;
/** Writes to the terminal, whatever the functions do with process.stdout and stderr. */
const out = process.stdout.write.bind(process.stdout);
const err = process.stderr.write.bind(process.stderr);
/** What stopping does, in the order it was set up (it is undone in reverse), each with what it stops. */
const cleanups: Array<[string, () => Promise<unknown>]> = [];
let stopping: Promise<void> | undefined;
let headless = false;

// In Lambda an uncaught error ends the container and the next event gets a fresh one; here it
// would end the whole stack, so it is logged, counted in the view, and the stack goes on.
const uncaught = { count: 0, last: '' };
const recordUncaught = (error: unknown) => {
  // The terminal or pipe that reads the stack is gone (its parent was killed): nothing can be shown,
  // and writing the error would raise another EPIPE for ever, so the stack stops.
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE') {
    void stopLocalStack(0);
    return;
  }
  uncaught.count++;
  uncaught.last = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `${JSON.stringify({ level: 'ERROR', message: 'uncaught error in the local stack', error: uncaught.last })}\n`,
  );
};

/**
 * `npm start`: the whole system on this machine, as it runs on AWS. Embedded DynamoDB and
 * PostgreSQL, a RabbitMQ vhost of its own, the real handlers invoked with AWS-shaped events on
 * serverless.yml's schedules (sped up), a traffic generator, a live view.
 */
export async function runLocalStack(options: LocalStackOptions): Promise<void> {
  headless = options.headless;
  process.on('SIGINT', () => void stopLocalStack(0));
  process.on('SIGTERM', () => void stopLocalStack(0));
  process.on('uncaughtException', recordUncaught);
  process.on('unhandledRejection', recordUncaught);
  try {
    await start(options);
  } catch (error) {
    out(`${ansi.showCursor}npm start failed: ${(error as Error).message}\n`);
    await stopLocalStack(1);
  }
}

async function start(options: LocalStackOptions) {
  const { speed, duration, amqpUrl, managementUrl } = options;
  const startedAt = Date.now();
  // Start-up takes a while (PGlite, the handlers' first load): a line per step, to stderr when stdout is the JSON.
  const progress = (line: string) =>
    (headless ? err : out)(`[${Math.round((Date.now() - startedAt) / 1000)} s] ${line}\n`);
  // The worker's counts (its map, once it is up), sampled with each pass and once a second.
  let workerCounts: ReadonlyMap<string, number> = new Map();
  const rates = new RateWindow(RATE_WINDOW_MS, startedAt, () => workerCounts);
  // Which distributor execution wrote a pass line: its own async context (the Logger's request id is the
  // last-started execution's while several run in this one process).
  const executions = new AsyncLocalStorage<string>();
  // Passes on demand, counted as each is logged (an execution serving a busy target can run for its
  // whole invocation): all of an invoked execution's, and a scheduled one's after its first (the schedule's pass).
  const onDemand = { passes: 0 };
  const running = new Map<string, { invokedOnDemand: boolean; passes: number }>();
  const passTap = new PassTap((summary, at) => {
    const requestId = executions.getStore();
    rates.addPass(summary, at, requestId);
    const execution = requestId === undefined ? undefined : running.get(requestId);
    if (execution && (execution.invokedOnDemand || execution.passes > 0)) onDemand.passes++;
    if (execution) execution.passes++;
  });
  // The functions log to stdout as in Lambda; here their lines go to the log file, the view to the terminal.
  const log = createWriteStream(options.logFile, { flags: 'w' });
  const toLog = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    log.write(chunk);
    passTap.write(chunk);
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  const [stdoutWrite, stderrWrite] = [process.stdout.write, process.stderr.write];
  process.stdout.write = toLog;
  process.stderr.write = toLog;
  cleanups.push([
    'the log file',
    () => {
      [process.stdout.write, process.stderr.write] = [stdoutWrite, stderrWrite];
      return new Promise((resolve) => log.end(resolve));
    },
  ]);

  progress('Starting the Fairway local stack: a RabbitMQ vhost of its own…');
  const vhost = await createDemoVhost(amqpUrl, managementUrl, `fairway-demo-${process.pid}`);
  cleanups.push([`the vhost ${vhost.vhost} (deleting it)`, () => vhost.delete()]);
  progress('Embedded DynamoDB, and NXRG and OpenXDS in PGlite with demo data…');
  const [dynamo, registry] = await Promise.all([startDynamo(), DemoRegistry.start()]);
  cleanups.push(['embedded DynamoDB', () => dynamo.stop()], ['NXRG and OpenXDS (PGlite)', () => registry.stop()]);
  await dynamo.createTables();

  const functions = serviceFunctions(options.stage);
  const distributorFn = functions.find((f) => f.name === 'distributor')!;
  /** A distributor execution, known to the rates while it runs (its moves are logged pass by pass). */
  const runDistributor = async (event: unknown, invokedOnDemand: boolean) => {
    const handler = await loadHandler('distributor');
    const context = lambdaContext(distributorFn.deployedName, distributorFn.timeoutSeconds);
    rates.executionStarted(context.awsRequestId, Date.now());
    running.set(context.awsRequestId, { invokedOnDemand, passes: 0 });
    try {
      return (await executions.run(context.awsRequestId, () => handler(event as never, context))) as ExecutionSummary;
    } finally {
      rates.executionEnded(context.awsRequestId);
      running.delete(context.awsRequestId);
    }
  };
  // Passes on demand: the functions' Lambda client invokes the distributor here, as on AWS.
  const lambda = await startLambdaInvokeServer(async (_name, event) => {
    await runDistributor(event, true);
  }, recordUncaught);
  cleanups.push(['the Lambda invoke endpoint', () => lambda.close()]);
  const env = functionEnvironment(
    { dynamoEndpoint: dynamo.endpoint, amqpUrl: vhost.amqpUrl, managementUrl, vhost: vhost.vhost, ...registry.urls },
    {
      stage: options.stage,
      speed,
      documentTypes: registry.documentTypes,
      distributor: { functionName: distributorFn.deployedName, endpoint: lambda.endpoint },
    },
  );
  Object.assign(process.env, env);

  progress('The document worker, the router behind its SQS queue, the schedules…');
  // The target queue a document worker reads: priorities on (SPEC §1), bounded so that the
  // distributor's fair share decides who gets in.
  const connection = await connect(vhost.amqpUrl);
  const setup = await connection.createChannel();
  await setup.assertQueue(target, { durable: true, arguments: { 'x-max-priority': 9, 'x-max-length': 60 } });
  await connection.close();
  const worker = new SimulatedWorker(vhost.amqpUrl, target, 15);
  workerCounts = worker.processed;
  worker.start();
  cleanups.push(['the document worker', () => worker.stop()]);

  const router = await loadHandler('router');
  const routerFn = functions.find((f) => f.name === 'router')!;
  const tenantSettings = loadTenantSettings(env);
  // Workers' events go through SQS, and the router is invoked by a poller that behaves like Lambda's.
  let traffic: TrafficGenerator | undefined;
  const afterProcess = await startLocalAfterProcessQueue({
    stage: options.stage,
    speed,
    invoke: (event) => router(event, lambdaContext(routerFn.deployedName, routerFn.timeoutSeconds)),
    onBatch: (outcome) => traffic?.record(outcome),
    onError: recordUncaught,
  });
  cleanups.push(['the SQS queue and its router poller', () => afterProcess.stop()]);
  env.SQS_ENDPOINT = afterProcess.endpoint;
  env.FAIRWAY_STAGE = options.stage;
  traffic = new TrafficGenerator(
    demoTenants(target, tenantSettings.rules.resetIntervalMs),
    (bodies) => afterProcess.send(bodies),
    afterProcess.maxReceiveCount,
  );

  const fills = new Map<string, number>();
  const invoke = async (fn: ServiceFunction) => {
    const event = scheduledEvent(`${fn.deployedName}-schedule`);
    if (fn.name === 'distributor') return runDistributor(event, false);
    const handler = await loadHandler(fn.name as never);
    const result = await handler(event, lambdaContext(fn.deployedName, fn.timeoutSeconds));
    // A cleanup invocation answers with its steps (lib/cleanup/step-runner.ts); a fill means the stack was empty.
    for (const step of [result].flat() as Array<{ job?: string; fill?: boolean } | undefined>) {
      if (step?.fill && step.job) fills.set(step.job, (fills.get(step.job) ?? 0) + 1);
    }
    return result;
  };
  const scheduler = new Scheduler(functions, speed, invoke);
  cleanups.push(
    ['the schedules (waiting for the running distributor and cleanup invocations)', () => scheduler.stop()],
    ['the traffic', () => traffic.stop()],
  );
  progress('Loading the functions (the first invocation of each bundles it)…');
  traffic.start();
  scheduler.start();
  const depths = new QueueDepths(vhost.amqpUrl);
  cleanups.push(['the depth reader', () => depths.close()]);
  // The workers' counts, once a second, for the rates' window.
  const sampler = setInterval(() => rates.sample(Date.now()), 1000);
  cleanups.push(['the rate sampler', async () => clearInterval(sampler)]);

  const doc = dynamo.doc;
  const sources = {
    speed,
    startedAt,
    doc,
    rules: tenantSettings.rules,
    management: new ManagementClient(managementUrl, vhost.vhost),
    queueSettings: loadQueueSettings(env),
    operator: createCleanupOperator(doc, 'CleanupStackTable'),
    registry,
    traffic: traffic.traffic,
    processed: worker.processed,
    schedules: scheduler.stats,
    fills,
    rates,
    onDemand,
    depths: (queues: readonly string[]) => depths.read(queues),
  };
  const notes = [
    `RabbitMQ vhost ${vhost.vhost} (deleted on exit); function logs and EMF metrics: ${options.logFile}`,
    'Operate it from another terminal, this environment first:',
    `  ${operatorEnv(env)} npx fairway tenants|queues|stack|dlq|invoke <function>`,
  ];

  if (headless) {
    progress(
      notes
        .slice(1)
        .map((note) => note.trim())
        .join(' '),
    );
    const { settled, json } = await runHeadless({
      sources,
      startedAt,
      durationSeconds: duration ?? 120,
      rateWindowMs: RATE_WINDOW_MS,
      quiesce: async () => {
        progress('The final picture is taken; stopping the traffic and the schedules…');
        await traffic.stop();
        await scheduler.stop();
      },
      uncaughtErrors: () => uncaught.count,
    });
    writeFileSync(options.resultFile, json);
    await stopLocalStack(settled ? 0 : 1, () => out(json));
    return;
  }

  out(ansi.hideCursor + ansi.clearScreen);
  let drawing = false;
  // While a service is briefly unreachable (RabbitMQ restarting, say) the last picture stays, marked stale.
  let last: Snapshot | undefined;
  let lastAt = Date.now();
  const state: ViewState = { trends: new Trends() };
  const draw = async () => {
    if (drawing || stopping) return;
    drawing = true;
    try {
      try {
        last = await takeSnapshot(sources);
        lastAt = Date.now();
        recordTrends(state.trends, last);
        delete state.stale;
      } catch (error) {
        state.stale = { since: lastAt, error: (error as Error).message };
      }
      const errors = uncaught.count
        ? [`uncaught errors: ${uncaught.count} (last: ${uncaught.last.slice(0, 100)})`]
        : [];
      const view = last ? renderView(last, [...notes, ...errors], state) : `view: ${state.stale?.error ?? 'starting'}`;
      if (!stopping) out(ansi.home + ansi.eraseLineEnds(view) + ansi.clearBelow);
    } finally {
      drawing = false;
    }
  };
  const timer = setInterval(draw, 500);
  cleanups.push(['the view', async () => clearInterval(timer)]);
  if (duration !== undefined) setTimeout(() => void stopLocalStack(0), duration * 1000);
}

/** Stops in reverse order of start: traffic and schedules first, then queues, servers, vhost. */
export function stopLocalStack(code: number, last?: () => void): Promise<void> {
  stopping ??= (async () => {
    // Stopping takes a while (a running distributor execution is waited for): a line per step.
    const say = headless ? err : out;
    if (!headless) say(`${ansi.showCursor}\n`);
    const begun = Date.now();
    for (const [what, cleanup] of cleanups.reverse()) {
      say(`[stopping, ${Math.round((Date.now() - begun) / 1000)} s] ${what}…\n`);
      await cleanup().catch((error: Error) => say(`while stopping ${what}: ${error.message}\n`));
    }
    say('Fairway local stack stopped: vhost deleted, embedded DynamoDB and PostgreSQL stopped.\n');
    last?.();
    process.exit(code);
  })();
  return stopping;
}
